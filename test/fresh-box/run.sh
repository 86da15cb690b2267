#!/usr/bin/env bash
# The fresh-box test (docs/development.md): in a clean Debian 12 root (debootstrap minbase plus
# ca-certificates, and this machine's Node.js), clones the current commit and runs the README's two
# commands as written, as root; then re-runs install.sh after a config-only change. Reports each
# command's exit status and duration, /health, the service's user and the test totals.
#
# The root runs in a network namespace of its own with only a loopback, so its PostgreSQL, its API
# and its test servers never meet the host's (5432 and 3000 stay the host's). Package downloads
# (apt, npm) go out through an HTTP proxy: socat in the namespace carries 127.0.0.1:3128 to a unix
# socket that egress-proxy.mjs serves on the host. Nothing on the host is stopped or reconfigured.
#
# Usage (as root, from the checkout):  test/fresh-box/run.sh [--keep] [--port-taken] [--install-only]
#   --keep          leave the root in /var/tmp for a look afterwards
#   --port-taken    something already listens on 5432 in the box (not a PostgreSQL install.sh manages)
#   --install-only  skip the second command (the tests), for a quick look at install.sh
# The bootstrapped root is cached in /var/cache/postlane-fresh-box (delete it to rebuild);
# the full log of the last run is kept there as last.log. Takes 10-30 minutes.
set -uo pipefail
KEEP=0 PORT_TAKEN=0 INSTALL_ONLY=0
for arg in "$@"; do
  case "$arg" in
    --keep) KEEP=1 ;;
    --port-taken) PORT_TAKEN=1 ;;
    --install-only) INSTALL_ONLY=1 ;;
    *) echo "fresh-box: unknown option $arg (see the header of $0)" >&2; exit 1 ;;
  esac
done
[ "$(id -u)" -eq 0 ] || { echo "fresh-box: run as root (debootstrap, chroot, ip netns)" >&2; exit 1; }
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
REPO=$(git -C "$HERE" rev-parse --show-toplevel)
COMMIT=$(git -C "$REPO" rev-parse HEAD)
CACHE=/var/cache/postlane-fresh-box
TARBALL=$CACHE/bookworm-minbase.tar.gz
WORK=$(mktemp -d /var/tmp/postlane-fresh-box.XXXXXX)
ROOT=$WORK/root
LOG=$WORK/log
NS=postlane-fb-$$
PIDS=()
mkdir -p "$CACHE" "$ROOT"
chmod 755 "$WORK" "$ROOT"
: >"$LOG"

log() { printf '%s\n' "$*" >>"$LOG"; }
say() { printf 'fresh-box: %s\n' "$*"; log "== $*"; }
fail() { say "$*"; exit 1; }

cleanup() {
  # What runs in the root (the appliance, its PostgreSQL, test servers) is ours: found by its root.
  local p pids=()
  for p in /proc/[0-9]*; do [ "$(readlink "$p/root" 2>/dev/null)" = "$ROOT" ] && pids+=("${p#/proc/}"); done
  [ ${#pids[@]} -eq 0 ] || { kill -TERM "${pids[@]}" 2>/dev/null; sleep 2; kill -KILL "${pids[@]}" 2>/dev/null; }
  [ ${#PIDS[@]} -eq 0 ] || kill "${PIDS[@]}" 2>/dev/null
  sleep 1
  for m in dev/shm dev/pts dev sys proc; do umount -l "$ROOT/$m" 2>/dev/null; done
  ip netns del "$NS" 2>/dev/null
  cp "$LOG" "$CACHE/last.log" 2>/dev/null
  if [ "$KEEP" -eq 1 ]; then echo "fresh-box: kept $WORK" >&2; else rm -rf --one-file-system "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- a clean Debian 12 root, cached --------------------------------------------------------------
if [ -f "$TARBALL" ]; then
  say "unpacking the cached root ($TARBALL)"
  tar -xzf "$TARBALL" -C "$ROOT" || fail "cannot unpack $TARBALL (delete it to rebuild)"
else
  command -v debootstrap >/dev/null || apt-get install -y -qq debootstrap >>"$LOG" 2>&1 || fail "no debootstrap (apt-get install debootstrap)"
  mirror=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null)
  say "debootstrap bookworm minbase + ca-certificates from ${mirror:=http://deb.debian.org/debian}"
  debootstrap --variant=minbase --include=ca-certificates bookworm "$ROOT" "$mirror" >>"$LOG" 2>&1 || fail "debootstrap failed (see $CACHE/last.log)"
  rm -rf "$ROOT"/var/cache/apt/archives/*.deb "$ROOT"/var/lib/apt/lists/*
  tar -czf "$TARBALL.tmp" -C "$ROOT" . && mv "$TARBALL.tmp" "$TARBALL"
fi
# What this machine needs to reach Debian and npm: its apt sources and settings, its CA certificates.
cp /etc/apt/sources.list.d/debian.sources "$ROOT/etc/apt/sources.list.d/" 2>/dev/null && rm -f "$ROOT/etc/apt/sources.list"
cp /etc/apt/apt.conf.d/99artifact-registry "$ROOT/etc/apt/apt.conf.d/" 2>/dev/null
mkdir -p "$ROOT/usr/local/share/ca-certificates"
cp /usr/local/share/ca-certificates/*.crt "$ROOT/usr/local/share/ca-certificates/" 2>/dev/null
printf 'Acquire::http::Proxy "http://127.0.0.1:3128/";\nAcquire::https::Proxy "http://127.0.0.1:3128/";\n' >"$ROOT/etc/apt/apt.conf.d/95fresh-box-proxy"
printf '127.0.0.1 localhost\n::1 localhost ip6-localhost ip6-loopback\n' >"$ROOT/etc/hosts"
printf 'fresh-box\n' >"$ROOT/etc/hostname"

# This machine's Node.js and npm, as the issue's clean box had them.
node_bin=$(readlink -f "$(command -v node)")
npm_dir=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
mkdir -p "$ROOT/usr/local/bin" "$ROOT/usr/local/lib/node_modules" "$ROOT/usr/local/etc"
cp "$node_bin" "$ROOT/usr/local/bin/node"
cp -a "$npm_dir" "$ROOT/usr/local/lib/node_modules/npm"
ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$ROOT/usr/local/bin/npm"
ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$ROOT/usr/local/bin/npx"
printf 'cafile=/etc/ssl/certs/ca-certificates.crt\nproxy=http://127.0.0.1:3128/\nhttps-proxy=http://127.0.0.1:3128/\nupdate-notifier=false\n' >"$ROOT/usr/local/etc/npmrc"

# The current commit (not the working tree's uncommitted changes).
git clone -q --no-checkout "$REPO" "$ROOT/opt/postlane" && git -C "$ROOT/opt/postlane" checkout -q "$COMMIT" || fail "git clone failed"
say "commit $(git -C "$REPO" log -1 --format='%h %s' | cut -c1-100)"

# --- its own network namespace, with a way out for downloads only ---------------------------------
ip netns add "$NS" || fail "ip netns add failed"
ip netns exec "$NS" ip link set lo up
node "$HERE/egress-proxy.mjs" "$WORK/proxy.sock" >>"$LOG" 2>&1 &
PIDS+=($!)
ip netns exec "$NS" socat TCP-LISTEN:3128,bind=127.0.0.1,fork,reuseaddr "UNIX-CONNECT:$WORK/proxy.sock" >>"$LOG" 2>&1 &
PIDS+=($!)
for m in proc sys dev dev/pts; do mount --bind "/$m" "$ROOT/$m"; done
mount -t tmpfs -o mode=1777 tmpfs "$ROOT/dev/shm"
in_box() {
  ip netns exec "$NS" chroot "$ROOT" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin /bin/bash -c "$1"
}
in_box 'update-ca-certificates >/dev/null 2>&1' || fail "update-ca-certificates failed in the root"

# --- the README's two commands, as written: the first two lines of its first sh block -----------
mapfile -t cmds < <(awk '/^```sh/ {f=1; next} /^```/ {if (f) exit} f' "$ROOT/opt/postlane/README.md" | sed 's/ *#.*//' | sed '/^$/d' | head -2)
[ ${#cmds[@]} -eq 2 ] || fail "the README shows no two commands"
health() { in_box 'curl -s -o /dev/null -w "%{http_code}" --max-time 5 http://127.0.0.1:3000/health' 2>/dev/null; }
service_user() {
  local p
  for p in /proc/[0-9]*; do
    if [ "$(readlink "$p/root" 2>/dev/null)" = "$ROOT" ] && tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -q 'postlane.js serve'; then
      in_box "getent passwd $(stat -c %u "$p") | cut -d: -f1"
      return
    fi
  done
  echo none
}
timed() { # $1 label, $2 command: runs it in the root, logs, prints status and duration
  local start=$SECONDS rc
  log "== $1: $2"
  in_box "cd /opt/postlane && $2" >>"$LOG" 2>&1
  rc=$?
  say "$1: '$2' exit $rc in $((SECONDS - start)) s"
  return $rc
}

if [ "$PORT_TAKEN" -eq 1 ]; then
  ip netns exec "$NS" socat TCP-LISTEN:5432,bind=127.0.0.1,fork,reuseaddr SYSTEM:'echo not-postgres' >>"$LOG" 2>&1 &
  PIDS+=($!)
  say "127.0.0.1:5432 in the box is taken by a listener that is not a PostgreSQL"
fi
timed "command 1" "${cmds[0]}"; rc1=$?
h1=$(health)
say "GET /health: $h1; the service runs as: $(service_user)"
say "in the box: $(in_box 'stat -c "%n %U:%G %a" /etc/postlane/config.json /var/lib/postlane; pg_lsclusters -h' 2>&1 | paste -sd ';' -)"
rc2=0
if [ "$INSTALL_ONLY" -eq 0 ]; then
  timed "command 2" "${cmds[1]}"; rc2=$?
  totals=$(sed 's/\x1b\[[0-9;]*m//g' "$LOG" | grep -E '^ +(Test Files|Tests) ' | tail -2 | tr -s ' ' | paste -sd ';' -)
  say "test totals: ${totals:-none printed}"
fi

# --- a config-only re-run: a list setting written as a JSON array, as the README documents -----
in_box 'node -e '\''const f = "/etc/postlane/config.json", fs = require("fs"); const c = JSON.parse(fs.readFileSync(f)); c.POSTLANE_WEBHOOK_ALLOWED_CIDRS = ["127.0.0.1/32"]; fs.writeFileSync(f, JSON.stringify(c, null, 2))'\''' >>"$LOG" 2>&1
timed "config-only re-run" "${cmds[0]}"; rc3=$?
h3=$(health)
say "GET /health: $h3; the service runs as: $(service_user)"

[ "$rc1" -eq 0 ] && [ "$h1" = 200 ] && [ "$rc2" -eq 0 ] && [ "$rc3" -eq 0 ] && [ "$h3" = 200 ] ||
  fail "falls short; full log: $CACHE/last.log"
say "both README commands green on a clean Debian 12$([ "$INSTALL_ONLY" -eq 1 ] && echo ' (tests not run: --install-only)')"
