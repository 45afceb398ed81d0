# A single-node Slurm cluster in a scratch folder, for the Slurm tests:
# munged, slurmctld and slurmd run in the foreground of background jobs,
# with every path (key, sockets, state, spool, logs, pids) under $1. No
# systemd is needed. Source it, then:
#   slurm_start DIR     start the cluster; returns 0 once the node is idle,
#                       77 (after printing "SKIP: ...") when it cannot start
#   slurm_stop          stop every daemon slurm_start started
# SLURM_CONF is exported for the client commands (sbatch, squeue, ...).

SLURM_PIDS=""

slurm_stop() {
  local p i ids
  # Jobs first (their slurmstepd outlives slurmd), while slurmctld answers.
  if [ -n "$SLURM_PIDS" ] && [ -n "${SLURM_CONF:-}" ]; then
    ids=$(squeue -h -o %A 2>/dev/null)
    if [ -n "$ids" ]; then
      scancel $ids 2>/dev/null
      for i in $(seq 1 40); do [ -z "$(squeue -h 2>/dev/null)" ] && break; sleep 0.25; done
    fi
  fi
  for p in $SLURM_PIDS; do kill "$p" 2>/dev/null; done
  for p in $SLURM_PIDS; do
    for i in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$p" 2>/dev/null || break; sleep 0.2; done
    kill -9 "$p" 2>/dev/null
    wait "$p" 2>/dev/null
  done
  # Whatever this cluster started and is still there (a step daemon, a
  # job's process): they carry this cluster's SLURM_CONF.
  if [ -n "$SLURM_PIDS" ] && [ -n "${SLURM_CONF:-}" ]; then
    for p in /proc/[0-9]*; do
      p=${p#/proc/}
      [ "$p" != $$ ] || continue
      { tr '\0' '\n' <"/proc/$p/environ"; } 2>/dev/null | grep -qxF "SLURM_CONF=$SLURM_CONF" &&
        kill -9 "$p" 2>/dev/null
    done
  fi
  SLURM_PIDS=""
}

slurm_skip() {
  echo "SKIP: $*"
  return 77
}

slurm_start() {
  local d=$1 host cpus i
  for c in munged slurmctld slurmd sbatch squeue sinfo scancel; do
    command -v "$c" >/dev/null 2>&1 || [ -x "/usr/sbin/$c" ] ||
      { slurm_skip "$c is not installed (scripts/deps.sh test installs slurm-wlm and munge)"; return; }
  done
  [ "$(id -u)" = 0 ] || { slurm_skip "the single-node Slurm cluster needs root (slurmd runs jobs as their user)"; return; }
  PATH=$PATH:/usr/sbin
  host=$(hostname -s)
  cpus=8
  mkdir -p "$d/munge" "$d/state" "$d/spool" "$d/log" || return 1
  chmod 700 "$d/munge"
  # A key of 1024 random bytes, readable only by its owner.
  dd if=/dev/urandom of="$d/munge/munge.key" bs=1024 count=1 2>/dev/null
  chmod 400 "$d/munge/munge.key"
  munged -F -f --socket="$d/munge/munge.socket" --key-file="$d/munge/munge.key" \
    --pid-file="$d/munge/munged.pid" --log-file="$d/log/munged.log" \
    --seed-file="$d/munge/munge.seed" >"$d/log/munged.out" 2>&1 &
  SLURM_PIDS="$SLURM_PIDS $!"
  for i in $(seq 1 50); do [ -S "$d/munge/munge.socket" ] && break; sleep 0.1; done
  [ -S "$d/munge/munge.socket" ] ||
    { cat "$d/log/munged.out" "$d/log/munged.log" 2>/dev/null; slurm_stop; slurm_skip "munged did not start"; return; }
  # More CPUs than the machine has (config_overrides), so the tests'
  # jobs run side by side; jobs of this cluster only sleep or screen tiny
  # shapes.
  cat >"$d/slurm.conf" <<CONF
ClusterName=zlbtest
SlurmctldHost=$host
SlurmctldPort=$((20000 + $$ % 20000))
SlurmdPort=$((20001 + $$ % 20000))
AuthType=auth/munge
AuthInfo=socket=$d/munge/munge.socket
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool
SlurmctldPidFile=$d/slurmctld.pid
SlurmdPidFile=$d/slurmd.pid
SlurmctldLogFile=$d/log/slurmctld.log
SlurmdLogFile=$d/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0
SlurmdParameters=config_overrides
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
KillWait=5
MinJobAge=300
InactiveLimit=0
OverTimeLimit=0
NodeName=$host CPUs=$cpus State=UNKNOWN
PartitionName=main Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
  export SLURM_CONF="$d/slurm.conf"
  slurmctld -D -i -f "$SLURM_CONF" >"$d/log/slurmctld.out" 2>&1 &
  SLURM_PIDS="$SLURM_PIDS $!"
  slurmd -D -f "$SLURM_CONF" >"$d/log/slurmd.out" 2>&1 &
  SLURM_PIDS="$SLURM_PIDS $!"
  for i in $(seq 1 150); do
    case "$(sinfo -h -N -o %t 2>/dev/null)" in idle*) return 0 ;; esac
    sleep 0.2
  done
  tail -20 "$d"/log/*.log "$d"/log/*.out >&2 2>/dev/null
  slurm_stop
  slurm_skip "the single-node Slurm cluster did not come up within 30 s (logs above)"
}
