# Sourced by the submit scripts of scripts/slurm.
#
# A job's settings travel as a file on the shared storage, WORK/job.env, written with
# `declare -p` (flags holding spaces or quotes reach every task intact) together with the
# functions the sbatch scripts use (`declare -f`): sbatch runs a copy of its script from the
# node's spool folder, where nothing beside it can be found, so everything a task needs is in
# WORK/job.env.

# task_shard prints "i N" for this array task: i is SLURM_ARRAY_TASK_ID, N the job's shard count
# (SHARDS); an index outside 0..N-1 is an error, since shard i/N must mean the same sessions on
# every machine.
task_shard() {
	local i=${SLURM_ARRAY_TASK_ID:?not an array task} n=${SHARDS:?}
	if [ "$i" -ge "$n" ] || [ "${SLURM_ARRAY_TASK_COUNT:-$n}" -ne "$n" ]; then
		echo "aiperf slurm job: array task $i of ${SLURM_ARRAY_TASK_COUNT:-?} is not a shard of $n (submit --array=0-$((n - 1)))" >&2
		return 2
	fi
	echo "$i $n"
}

# write_env WORK NAME... writes the named variables (arrays included), AIPERF_BIN's PATH rule
# and task_shard to WORK/job.env, atomically.
write_env() {
	local work=$1
	shift
	{
		echo "# Written by scripts/slurm/$(basename "$0") on $(date -u +%FT%TZ); sourced by every task."
		declare -p "$@"
		declare -f task_shard
		echo 'if [ -n "${AIPERF_BIN:-}" ]; then PATH=$AIPERF_BIN:$PATH; fi'
	} >"$work/job.env.tmp.$$"
	mv "$work/job.env.tmp.$$" "$work/job.env"
}

# need_cmd NAME... fails unless each command is on PATH.
need_cmd() {
	local c
	for c; do
		command -v "$c" >/dev/null || { echo "$(basename "$0"): $c not found on PATH" >&2; exit 2; }
	done
}

# split_flags MARK1 ARRAY1 MARK2 ARRAY2 ARG... appends the ARGs that follow MARK1 to the array
# named ARRAY1 and those that follow MARK2 to ARRAY2 (either mark may come again); an ARG before
# both marks is a usage error.
split_flags() {
	local m1=$1 m2=$3 a into=
	local -n split_a1=$2 split_a2=$4
	shift 4
	for a; do
		case $a in
		"$m1") into=1 ;;
		"$m2") into=2 ;;
		*)
			case $into in
			1) split_a1+=("$a") ;;
			2) split_a2+=("$a") ;;
			*) echo "$(basename "$0"): $a: flags go after $m1 or $m2" >&2; exit 2 ;;
			esac
			;;
		esac
	done
}
