# shellcheck shell=bash
# Shared by bench/run and bench/soak (sourced, not run): a temporary work folder, the
# processes they start (tracked by pid and stopped on exit), waiting for ports and for the
# processor, reading loadgen's key=value lines. Loopback only; every wait is bounded.

BENCH_PIDS=()
BENCH_WORK=""

log() { printf '%s %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# alive PID: the process exists and is not a zombie (an exited child not yet waited for).
alive() { [[ -e /proc/$1 ]] && [[ $(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null) != Z ]]; }

# Stops every process this script started (by pid), then removes the work folder.
bench_cleanup() {
  local pid
  for pid in "${BENCH_PIDS[@]}"; do
    if alive "$pid"; then kill -TERM "$pid" 2>/dev/null || true; fi
  done
  for pid in "${BENCH_PIDS[@]}"; do
    for _ in $(seq 50); do alive "$pid" || break; sleep 0.1; done
    if alive "$pid"; then kill -KILL "$pid" 2>/dev/null || true; fi
  done
  if [[ -n "$BENCH_WORK" && -d "$BENCH_WORK" ]]; then rm -rf -- "$BENCH_WORK"; fi
}

# Creates the work folder (under $TMPDIR) with a random signing secret and a config file.
bench_make_work() {
  BENCH_WORK="$(mktemp -d "${TMPDIR:-/tmp}/healthhook-bench.XXXXXX")"
  (umask 077 && python3 -c 'import base64, os; print("whsec_" + base64.b64encode(os.urandom(32)).decode())' \
      > "$BENCH_WORK/secret")
  cat > "$BENCH_WORK/healthhook.toml" <<TOML
signing_secret_files = ["secret"]
log_level = "warn"
TOML
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# wait_port PORT SECONDS: until something accepts on 127.0.0.1:PORT.
wait_port() {
  local port=$1 deadline=$((SECONDS + $2))
  while ((SECONDS < deadline)); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then return 0; fi
    sleep 0.05
  done
  return 1
}

# stop_pid PID: SIGTERM, then SIGKILL after 20 s; sets STOPPED_STATUS to its exit status.
# shellcheck disable=SC2034  # STOPPED_STATUS is read by the caller
stop_pid() {
  local pid=$1
  STOPPED_STATUS=""
  kill -TERM "$pid" 2>/dev/null || return 0
  for _ in $(seq 200); do alive "$pid" || break; sleep 0.1; done
  if alive "$pid"; then
    log "pid $pid did not stop within 20 s; killing it"
    kill -KILL "$pid" 2>/dev/null || true
  fi
  STOPPED_STATUS=0
  wait "$pid" 2>/dev/null || STOPPED_STATUS=$?
}

# start_serve DB [EXTRA ARGS...]: starts `healthhook serve` on a free port; sets SERVE_PID
# and SERVE_PORT. Its log goes to DB.log ($SERVE_LOG when set: DB may be a URI).
start_serve() {
  local db=$1 log_file=${SERVE_LOG:-$1.log}
  shift
  SERVE_PORT=$(free_port)
  env -u CREDENTIALS_DIRECTORY "$HEALTHHOOK" serve --config "$BENCH_WORK/healthhook.toml" \
      --listen "127.0.0.1:$SERVE_PORT" --database "$db" "$@" 2> "$log_file" &
  SERVE_PID=$!
  BENCH_PIDS+=("$SERVE_PID")
  wait_port "$SERVE_PORT" 30 || { cat "$log_file" >&2; die "healthhook serve did not listen within 30 s"; }
}

# start_noop: starts the no-op Beast server on a free port; sets NOOP_PID and NOOP_PORT.
start_noop() {
  NOOP_PORT=$(free_port)
  "$BUILD/bench/noop_server" "$NOOP_PORT" "$IO_THREADS" > /dev/null &
  NOOP_PID=$!
  BENCH_PIDS+=("$NOOP_PID")
  wait_port "$NOOP_PORT" 10 || die "noop_server did not listen within 10 s"
}

# kv FILE KEY: the value of the last KEY=value in FILE (empty when absent).
kv() { grep -o "\b$2=[^ ]*" "$1" 2>/dev/null | tail -1 | cut -d= -f2- || true; }

# wait_caught_up DB SECONDS: until the processor has applied every inbox row of DB (polled
# every 20 ms by loadgen without connections: a native poller, since starting an
# interpreter can take seconds on a loaded machine).
wait_caught_up() {
  "$BUILD/bench/loadgen" --port 9 --method GET --connections 0 --max-requests 0 --warmup 0 --duration 0 \
      --until-caught-up --catch-up-timeout "$2" --database "$1" > /dev/null 2>&1
}

# count_fds PID: open file descriptors of PID.
count_fds() { find "/proc/$1/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }
# rss_mib PID: resident memory of PID.
rss_mib() { awk '/VmRSS/ {printf "%.1f", $2 / 1024}' "/proc/$1/status"; }

load_average() { cut -d' ' -f1-3 /proc/loadavg; }
cpu_model() { grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'; }
