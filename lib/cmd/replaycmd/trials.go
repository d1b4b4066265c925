package replaycmd

// trialPrefix names the run directories of --trials: DIR/trial-1, ...
const trialPrefix = "trial-"
