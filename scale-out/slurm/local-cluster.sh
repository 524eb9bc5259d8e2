#!/usr/bin/env bash
# Starts a throwaway single-node Slurm (Debian's slurm-wlm and munge) on this
# machine, in a private directory, for trying the job-array recipe:
#   bash scale-out/slurm/local-cluster.sh start DIR   # prints SLURM_CONF=... to export
#   bash scale-out/slurm/local-cluster.sh stop DIR
# Needs root (slurmd runs jobs as their user). Nothing outside DIR is changed.
set -euo pipefail
cmd=${1:?start|stop}; dir=${2:?directory}
mkdir -p "$dir"; dir=$(cd "$dir" && pwd)
if [ "$cmd" = stop ]; then
  for p in slurmd slurmctld munged; do
    [ -f "$dir/$p.pid" ] || continue
    pid=$(cat "$dir/$p.pid")
    kill "$pid" 2>/dev/null || continue
    for i in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done  # let it write its state and exit
  done
  exit 0
fi
for b in munged slurmctld slurmd sbatch sinfo; do
  command -v "$b" >/dev/null || { echo "missing $b (apt-get install slurm-wlm munge)" >&2; exit 3; }
done
host=$(hostname -s)
cpus=$(nproc)
mkdir -p "$dir/munge" "$dir/state" "$dir/spool"
chmod 700 "$dir/munge"
[ -f "$dir/munge/munge.key" ] || dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$dir/munge/munge.key"
munged --force --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.sock" \
  --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" --seed-file="$dir/munge/munge.seed"
port=$((20000 + RANDOM % 20000))
cat > "$dir/slurm.conf" <<CONF
ClusterName=sightline-local
SlurmctldHost=$host
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.sock
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$port
SlurmdPort=$((port + 1))
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SlurmdParameters=config_overrides
NodeName=$host CPUs=$cpus State=UNKNOWN
PartitionName=local Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$dir/slurm.conf"
slurmctld -c
slurmd
for i in $(seq 1 40); do
  if sinfo -h -o '%T' 2>/dev/null | grep -qE '^(idle|mixed|allocated)'; then echo "SLURM_CONF=$SLURM_CONF"; exit 0; fi
  sleep 0.5
done
echo "slurm did not come up; see $dir/slurmctld.log and $dir/slurmd.log" >&2
exit 4
