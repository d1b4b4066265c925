package aiperf_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
	"go.yaml.in/yaml/v3"

	"github.com/aiperf/toolkit/lib/cmd/cachecmd"
	"github.com/aiperf/toolkit/lib/cmd/replaycmd"
)

// The Kubernetes manifests of deploy/k8s cannot run here; this test holds them to what can be
// checked: they parse, the Indexed Job's shards agree with themselves (completions, parallelism,
// the N of --shard and of the run directories, the report's list), every volume they mount
// exists and the shared one is the PersistentVolumeClaim of pvc.yaml, every flag they pass is a
// flag of the binary they call, and they name run directories and pass the sharding flags as the
// Slurm scripts do, so that the two recipes give the same layout to one report.

// k8sObject is the part of a manifest the test reads.
type k8sObject struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Spec struct {
		CompletionMode       string `yaml:"completionMode"`
		Completions          *int   `yaml:"completions"`
		Parallelism          *int   `yaml:"parallelism"`
		BackoffLimitPerIndex *int   `yaml:"backoffLimitPerIndex"`
		Template             struct {
			Spec podSpec `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

type podSpec struct {
	RestartPolicy  string      `yaml:"restartPolicy"`
	InitContainers []container `yaml:"initContainers"`
	Containers     []container `yaml:"containers"`
	Volumes        []struct {
		Name string `yaml:"name"`
		PVC  *struct {
			ClaimName string `yaml:"claimName"`
		} `yaml:"persistentVolumeClaim"`
		EmptyDir any `yaml:"emptyDir"`
	} `yaml:"volumes"`
}

type container struct {
	Name    string   `yaml:"name"`
	Image   string   `yaml:"image"`
	Command []string `yaml:"command"`
	Args    []string `yaml:"args"`
	Env     []struct {
		Name  string `yaml:"name"`
		Value string `yaml:"value"`
	} `yaml:"env"`
	VolumeMounts []struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
	} `yaml:"volumeMounts"`
}

func readManifest(t *testing.T, name string) k8sObject {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("deploy", "k8s", name))
	if err != nil {
		t.Fatal(err)
	}
	var o k8sObject
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(false)
	if err := dec.Decode(&o); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if o.APIVersion == "" || o.Kind == "" || o.Metadata.Name == "" {
		t.Fatalf("%s: apiVersion, kind and metadata.name are required (got %q %q %q)", name, o.APIVersion, o.Kind, o.Metadata.Name)
	}
	return o
}

// argv is a container's command line, command then args.
func (c container) argv() []string { return append(slices.Clone(c.Command), c.Args...) }

// flagValue returns the value after flag in argv ("" when absent).
func flagValue(argv []string, flag string) string {
	for i, a := range argv {
		if a == flag && i+1 < len(argv) {
			return argv[i+1]
		}
	}
	return ""
}

func TestK8sManifests(t *testing.T) {
	pvc := readManifest(t, "pvc.yaml")
	replay := readManifest(t, "replay-job.yaml")
	report := readManifest(t, "report-job.yaml")
	if pvc.Kind != "PersistentVolumeClaim" || replay.Kind != "Job" || report.Kind != "Job" {
		t.Fatalf("kinds %s, %s, %s; want PersistentVolumeClaim, Job, Job", pvc.Kind, replay.Kind, report.Kind)
	}

	// The Indexed Job: N shards, all at once (a shard that waits for a free slot would start
	// after the shared instant), none run again.
	s := replay.Spec
	if s.CompletionMode != "Indexed" {
		t.Errorf("replay-job: completionMode %q, want Indexed (JOB_COMPLETION_INDEX is the shard)", s.CompletionMode)
	}
	if s.Completions == nil || s.Parallelism == nil || *s.Completions < 1 || *s.Parallelism != *s.Completions {
		t.Fatalf("replay-job: completions %v and parallelism %v must be equal and positive", s.Completions, s.Parallelism)
	}
	n := *s.Completions
	if s.BackoffLimitPerIndex == nil || *s.BackoffLimitPerIndex != 0 || s.Template.Spec.RestartPolicy != "Never" {
		t.Errorf("replay-job: a failed shard must not run again late: want backoffLimitPerIndex 0 and restartPolicy Never")
	}
	var rc *container
	for i := range s.Template.Spec.Containers {
		if c := &s.Template.Spec.Containers[i]; len(c.Command) > 0 && c.Command[0] == "aiperf-replay" {
			rc = c
		}
	}
	if rc == nil {
		t.Fatal("replay-job: no aiperf-replay container")
	}
	argv := rc.argv()
	if got, want := flagValue(argv, "--shard"), "$(JOB_COMPLETION_INDEX)/"+strconv.Itoa(n); got != want {
		t.Errorf("replay-job: --shard %q, want %q (completions is %d)", got, want, n)
	}
	if flagValue(argv, "--start-at") == "" {
		t.Error("replay-job: no --start-at: the shards would start whenever their pods do")
	}
	runDir := flagValue(argv, "-o")
	if want := fmt.Sprintf("/work/replay/shard-$(JOB_COMPLETION_INDEX)-of-%d", n); runDir != want {
		t.Errorf("replay-job: -o %q, want %q (the Slurm scripts' layout)", runDir, want)
	}
	env := map[string]string{}
	for _, e := range rc.Env {
		env[e.Name] = e.Value
	}
	for _, a := range argv {
		for _, m := range regexp.MustCompile(`\$\(([A-Z_]+)\)`).FindAllStringSubmatch(a, -1) {
			if _, ok := env[m[1]]; !ok && m[1] != "JOB_COMPLETION_INDEX" {
				t.Errorf("replay-job: %s uses $(%s), which the container's env does not set", a, m[1])
			}
		}
	}

	// The report lists every shard's run directory once, in the same layout.
	var want []string
	for i := 0; i < n; i++ {
		want = append(want, fmt.Sprintf("/work/replay/shard-%d-of-%d", i, n))
	}
	rep := report.Spec.Template.Spec.Containers
	if len(rep) != 1 || len(rep[0].Args) == 0 || rep[0].Args[0] != "report" {
		t.Fatalf("report-job: want one container running aiperf-replay report")
	}
	var dirs []string
	for _, a := range rep[0].Args {
		if strings.HasPrefix(a, "/work/replay/shard-") {
			dirs = append(dirs, a)
		}
	}
	if !slices.Equal(dirs, want) {
		t.Errorf("report-job: shard directories %v, want %v", dirs, want)
	}
	if rep[0].Image != rc.Image {
		t.Errorf("report-job image %q, replay-job image %q: one image", rep[0].Image, rc.Image)
	}

	// Volumes: every mount names a volume of its pod; /work is the claim of pvc.yaml.
	for _, job := range []k8sObject{replay, report} {
		ps := job.Spec.Template.Spec
		vols := map[string]bool{}
		for _, v := range ps.Volumes {
			vols[v.Name] = true
			if v.PVC != nil && v.PVC.ClaimName != pvc.Metadata.Name {
				t.Errorf("%s: volume %s claims %q, pvc.yaml is %q", job.Metadata.Name, v.Name, v.PVC.ClaimName, pvc.Metadata.Name)
			}
		}
		for _, c := range append(slices.Clone(ps.InitContainers), ps.Containers...) {
			work := false
			for _, m := range c.VolumeMounts {
				if !vols[m.Name] {
					t.Errorf("%s/%s mounts %q, which is not a volume of the pod", job.Metadata.Name, c.Name, m.Name)
				}
				work = work || m.MountPath == "/work"
			}
			if strings.Contains(strings.Join(c.argv(), " "), "/work/") && !work {
				t.Errorf("%s/%s reads or writes /work without mounting it", job.Metadata.Name, c.Name)
			}
			checkFlags(t, job.Metadata.Name+"/"+c.Name, c.argv())
		}
	}

	// The Slurm scripts pass the same sharding flags and name run directories the same way.
	sb, err := os.ReadFile(filepath.Join("scripts", "slurm", "replay-shard.sbatch"))
	if err != nil {
		t.Fatal(err)
	}
	for _, frag := range []string{`--shard "$i/$n"`, `--start-at "$START_AT"`, `-o "$work/replay/shard-$i-of-$n"`, " -q "} {
		if !strings.Contains(string(sb), frag) {
			t.Errorf("scripts/slurm/replay-shard.sbatch does not pass %s (deploy/k8s/replay-job.yaml does)", frag)
		}
	}
	rb, err := os.ReadFile(filepath.Join("scripts", "slurm", "replay-report.sbatch"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(rb), `"$work/replay/shard-$i-of-$SHARDS"`) || !strings.Contains(string(rb), `-o "$work/replay/merged"`) {
		t.Error("scripts/slurm/replay-report.sbatch does not merge the layout deploy/k8s/report-job.yaml merges")
	}
}

// checkFlags fails for a flag argv passes that its binary (and subcommand) does not define.
func checkFlags(t *testing.T, where string, argv []string) {
	t.Helper()
	if len(argv) == 0 {
		return
	}
	var app *cli.App
	switch argv[0] {
	case "aiperf-replay":
		app = replaycmd.New()
	case "aiperf-cache":
		app = cachecmd.New()
	default:
		t.Errorf("%s: runs %s, which the test does not know", where, argv[0])
		return
	}
	known := map[string]bool{}
	add := func(fs []cli.Flag) {
		for _, f := range fs {
			for _, n := range f.Names() {
				known[n] = true
			}
		}
	}
	add(app.Flags)
	for _, a := range argv[1:] {
		if c := app.Command(a); c != nil {
			add(c.Flags)
			continue
		}
		if !strings.HasPrefix(a, "-") {
			continue
		}
		name := strings.TrimLeft(strings.SplitN(a, "=", 2)[0], "-")
		if !known[name] {
			t.Errorf("%s: %s is not a flag of %s", where, a, argv[0])
		}
	}
}
