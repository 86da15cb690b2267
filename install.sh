#!/usr/bin/env bash
# Postlane installer for Debian and Ubuntu: installs what is missing, builds, configures the
# database, creates the first team and API key, and starts the appliance as the unprivileged
# `postlane` user. Safe to run again: a re-run rebuilds (only what changed) and restarts, and keeps
# the data, the team, the keys and the database password.
# The inline node scripts use JS template literals: ${...} in single quotes is intended.
# shellcheck disable=SC2016
set -euo pipefail

usage() {
  cat <<'EOF'
Usage: ./install.sh [options]

Installs Postlane from this directory and starts it. Run it again to pick up a new
version: it changes nothing else (same team, same keys, same database password).

Options:
  --no-start           install and configure, but do not start (or restart) the service
  --host HOST          address the API listens on (default 127.0.0.1)
  --port PORT          port the API listens on (default 3000)
  --public-url URL     URL applications use to reach the API
  --team-name NAME     name of the first team (default "Default team")
  -h, --help           show this help

Database: $DATABASE_URL if set, else the one already in the config file, else a local
PostgreSQL (installed with apt if missing) with a role and database named "postlane".

Config file: $POSTLANE_CONFIG, else /etc/postlane/config.json as root,
else ~/.config/postlane/config.json. Run it as root (./install.sh as root, or
sudo ./install.sh from another account) to install packages, create the local
database and run Postlane as its own unprivileged user, under systemd where it runs.
EOF
}

# --- output -----------------------------------------------------------------------------------
if [ -t 2 ]; then BOLD=$'\033[1m' RED=$'\033[31m' RESET=$'\033[0m'; else BOLD='' RED='' RESET=''; fi
say() { printf '%s==>%s %s\n' "$BOLD" "$RESET" "$*" >&2; }
note() { printf '    %s\n' "$*" >&2; }
die() {
  printf '%serror:%s %s\n' "$RED" "$RESET" "$1" >&2
  shift
  local line
  for line in "$@"; do printf '       %s\n' "$line" >&2; done
  exit 1
}

# --- arguments --------------------------------------------------------------------------------
START=1
CLI_ARGS=()
ORIG_ARGS=("$@")
while [ $# -gt 0 ]; do
  case "$1" in
    --no-start) START=0 ;;
    --host | --port | --public-url | --team-name)
      [ $# -ge 2 ] || die "$1 needs a value (see --help)"
      CLI_ARGS+=("$1" "$2")
      shift
      ;;
    --host=* | --port=* | --public-url=* | --team-name=*) CLI_ARGS+=("$1") ;;
    -h | --help) usage; exit 0 ;;
    *) die "unknown option: $1 (see --help)" ;;
  esac
  shift
done

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
cd "$REPO"
if [ ! -f package.json ] || [ ! -f bin/postlane.js ]; then
  die "run install.sh from a Postlane checkout ($REPO has no package.json or bin/postlane.js)"
fi

IS_ROOT=0
[ "$(id -u)" -eq 0 ] && IS_ROOT=1
HAS_SYSTEMD=0
[ -d /run/systemd/system ] && HAS_SYSTEMD=1

as_root_hint() {
  local cmd="sudo ./install.sh"
  [ ${#ORIG_ARGS[@]} -gt 0 ] && cmd+=" ${ORIG_ARGS[*]}"
  printf '%s' "$cmd"
}

# --- apt --------------------------------------------------------------------------------------
APT_UPDATED=0
apt_install() {
  if [ "$IS_ROOT" -ne 1 ]; then
    die "missing packages: $*" "install them with:  sudo apt-get install -y $*" "or run the whole installer as root:  $(as_root_hint)"
  fi
  command -v apt-get >/dev/null || die "missing packages: $* (and no apt-get: install them by hand)"
  if [ "$APT_UPDATED" -eq 0 ]; then
    say "Updating package lists"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null || die "apt-get update failed"
    APT_UPDATED=1
  fi
  say "Installing $*"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null ||
    die "apt-get install $* failed"
}

# --- Node.js ----------------------------------------------------------------------------------
NODE_MIN_MAJOR=20 NODE_MIN_MINOR=10
node_ok() {
  command -v node >/dev/null 2>&1 &&
    node -e "const [a, b] = process.versions.node.split('.').map(Number);
             process.exit(a > $NODE_MIN_MAJOR || (a === $NODE_MIN_MAJOR && b >= $NODE_MIN_MINOR) ? 0 : 1)"
}

# What this release of Debian or Ubuntu is, for the advice below (POSTLANE_OS_RELEASE: tests).
OS_RELEASE=${POSTLANE_OS_RELEASE:-/etc/os-release}
os_field() { [ -r "$OS_RELEASE" ] && sed -n "s/^$1=//p" "$OS_RELEASE" | tr -d '"' | head -n 1; }

if ! node_ok; then
  have="not installed"
  command -v node >/dev/null 2>&1 && have="$(node --version)"
  # Debian's own nodejs is good enough from Debian 13 and Ubuntu 24.10 on; never fetch Node elsewhere.
  candidate=""
  if command -v apt-cache >/dev/null; then
    if [ "$IS_ROOT" -eq 1 ] && command -v apt-get >/dev/null; then
      DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null && APT_UPDATED=1
    fi
    candidate=$(apt-cache policy nodejs 2>/dev/null | awk '/Candidate:/ {print $2}')
  fi
  os_name=$(os_field PRETTY_NAME)
  os_name=${os_name:-this system}
  if [ -n "$candidate" ] && [ "$candidate" != "(none)" ] &&
    dpkg --compare-versions "${candidate#*:}" ge "$NODE_MIN_MAJOR.$NODE_MIN_MINOR"; then
    # Packaged and new enough: install it (as root), or say the one command that does.
    [ "$IS_ROOT" -eq 1 ] || die "Postlane needs Node.js >= $NODE_MIN_MAJOR.$NODE_MIN_MINOR (found: $have)." \
      "$os_name packages Node.js ${candidate#*:}, which is enough. Install it with:" \
      "  sudo apt-get install -y nodejs npm" \
      "then run ./install.sh again (or run the whole installer as root:  $(as_root_hint))."
    apt_install nodejs
  else
    packaged="no nodejs package"
    if [ -n "$candidate" ] && [ "$candidate" != "(none)" ]; then
      packaged="Node.js $(printf '%s' "${candidate#*:}" | cut -d. -f1)"
    fi
    case "$(os_field ID)" in
      debian) newer="Debian 13 (trixie), whose nodejs package is 20.19" ;;
      ubuntu) newer="Ubuntu 24.10 or later, whose nodejs package is 20 or newer" ;;
      *) newer="a release that packages Node.js $NODE_MIN_MAJOR or newer" ;;
    esac
    sudo=""
    [ "$IS_ROOT" -eq 1 ] || sudo="sudo "
    die "Postlane needs Node.js >= $NODE_MIN_MAJOR.$NODE_MIN_MINOR (found: $have)." \
      "$os_name packages $packaged, which is too old. Install Node.js 22 from NodeSource's" \
      "apt repository (download the setup script, read it, run it, then install nodejs):" \
      "  curl -fsSL https://deb.nodesource.com/setup_22.x -o nodesource_setup.sh" \
      "  ${sudo}bash nodesource_setup.sh" \
      "  ${sudo}apt-get install -y nodejs" \
      "or upgrade to $newer. Then run ./install.sh again."
  fi
  node_ok || die "Node.js is still older than $NODE_MIN_MAJOR.$NODE_MIN_MINOR after installing nodejs ($(node --version))"
fi
command -v npm >/dev/null 2>&1 || apt_install npm
NODE=$(command -v node)
say "Node.js $(node --version) at $NODE"

# Fail before the slow steps when a later one could not work.
if [ "$START" -eq 1 ] && ! command -v curl >/dev/null 2>&1; then apt_install curl ca-certificates; fi
if [ "$IS_ROOT" -ne 1 ] && [ -z "${DATABASE_URL:-}" ]; then
  # Same rule as configFilePath() in config/index.ts (asked for real once the CLI is built).
  guess_config=${POSTLANE_CONFIG:-${XDG_CONFIG_HOME:-$HOME/.config}/postlane/config.json}
  if ! grep -qs '"DATABASE_URL"' "$guess_config"; then
    die "no database configured, and creating a local one needs root." \
      "Either run as root:  $(as_root_hint)" \
      "or point Postlane at an existing database:  DATABASE_URL=postgres://user:pass@host:5432/db ./install.sh"
  fi
fi

# --- npm dependencies and build ---------------------------------------------------------------
# Each step leaves a stamp of what it was made from; a re-run with the same inputs (say, after a
# config change) skips it. Deleting node_modules or dist removes the stamp with them.
DEPS_STAMP=node_modules/.postlane-deps-stamp
BUILD_STAMP=dist/.postlane-build-stamp
deps_hash=$({ node --version; cat package.json package-lock.json 2>/dev/null; } | sha256sum | cut -d' ' -f1)
if [ "$(cat "$DEPS_STAMP" 2>/dev/null)" = "$deps_hash" ]; then
  say "npm dependencies unchanged since the last run"
else
  say "Installing npm dependencies"
  if [ -f package-lock.json ]; then
    NPM_CONFIG_UPDATE_NOTIFIER=false npm ci --no-audit --no-fund --loglevel=error </dev/null >&2 || die "npm ci failed"
  else
    NPM_CONFIG_UPDATE_NOTIFIER=false npm install --no-audit --no-fund --loglevel=error </dev/null >&2 || die "npm install failed"
  fi
  printf '%s\n' "$deps_hash" >"$DEPS_STAMP"
fi
build_hash=$({
  printf '%s\n' "$deps_hash"
  find tsconfig.json bin cli config server -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum
} | sha256sum | cut -d' ' -f1)
if [ "$(cat "$BUILD_STAMP" 2>/dev/null)" = "$build_hash" ]; then
  say "Build up to date"
else
  say "Building (tsc)"
  NPM_CONFIG_UPDATE_NOTIFIER=false npm run --silent build </dev/null >&2 || die "npm run build failed"
  printf '%s\n' "$build_hash" >"$BUILD_STAMP"
fi

# --- configuration ----------------------------------------------------------------------------
# The CLI decides where the config file lives; ask it, so both always agree.
CONFIG_PATH=$(node --input-type=module -e '
  const { pathToFileURL } = await import("node:url");
  const { configFilePath } = await import(pathToFileURL(process.argv[1] + "/dist/config/index.js").href);
  console.log(configFilePath());' "$REPO")

# Prints one key of the config file (empty if the file or the key is missing).
config_get() {
  node -e '
    const fs = require("fs");
    const [path, key] = process.argv.slice(1);
    if (!fs.existsSync(path)) process.exit(0);
    let value;
    try { value = JSON.parse(fs.readFileSync(path, "utf8"))[key]; }
    catch (err) { console.error(`${path}: not valid JSON (${err.message})`); process.exit(1); }
    if (value !== undefined && value !== null) console.log(typeof value === "string" ? value : JSON.stringify(value));' \
    "$CONFIG_PATH" "$1"
}
CONFIGURED_URL=$(config_get DATABASE_URL) || die "cannot read the config file $CONFIG_PATH"

# "host port user password database" of a postgres URL, URL-decoded, space-separated.
url_parts() {
  node -e '
    const u = new URL(process.argv[1]);
    const d = decodeURIComponent;
    console.log([u.hostname.replace(/^\[|\]$/g, "") || "localhost", u.port || "5432", d(u.username) || "-", d(u.password) || "-", d(u.pathname.slice(1)) || "-"].join(" "));' "$1"
}
is_local_host() { case "$1" in 127.0.0.1 | localhost | ::1) return 0 ;; *) return 1 ;; esac; }

# --- local PostgreSQL -------------------------------------------------------------------------
pg_server_installed() { command -v pg_lsclusters >/dev/null 2>&1 && compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null; }
pg_main_version() { pg_lsclusters -h 2>/dev/null | awk '$2 == "main" {print $1}' | sort -V | tail -n 1; }
pg_cluster_field() { pg_lsclusters -h 2>/dev/null | awk -v v="$1" -v f="$2" '$1 == v && $2 == "main" {print $f}'; }

# Something (any server) accepts connections on this loopback port.
port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
# The first port from 5433 that no server listens on and no cluster of this machine is set to.
free_pg_port() {
  local port=5433
  while port_in_use "$port" || pg_lsclusters -h 2>/dev/null | awk -v p="$port" '$3 == p {found = 1} END {exit !found}'; do
    port=$((port + 1))
  done
  printf '%s' "$port"
}

PG_PORT=""
# Installs PostgreSQL if needed, makes sure the newest "main" cluster runs, sets PG_PORT. A port
# held by a server we do not manage (another PostgreSQL, another tenant's) moves our cluster to a
# free port rather than using or fighting that server.
pg_ensure_running() {
  if ! pg_server_installed; then
    apt_install postgresql
  fi
  local ver port
  ver=$(pg_main_version)
  if [ -z "$ver" ]; then
    [ "$IS_ROOT" -eq 1 ] || die "PostgreSQL has no cluster yet; create one as root: sudo pg_createcluster <version> main"
    ver=$(find /usr/lib/postgresql -mindepth 1 -maxdepth 1 -printf '%f\n' | sort -V | tail -n 1)
    port=5432
    if port_in_use 5432; then
      port=$(free_pg_port)
      say "Port 5432 is taken by a server this installer does not manage: creating cluster \"main\" on port $port instead"
    fi
    say "Creating PostgreSQL $ver cluster \"main\" (port $port)"
    pg_createcluster -p "$port" "$ver" main >/dev/null
  fi
  PG_PORT=$(pg_cluster_field "$ver" 3)
  if [ "$(pg_cluster_field "$ver" 4)" != online ]; then
    [ "$IS_ROOT" -eq 1 ] || die "PostgreSQL $ver is not running; start it as root, or run: $(as_root_hint)"
    # Installing the package made "main" on 5432 and could not start it there: something else listens.
    if port_in_use "$PG_PORT"; then
      port=$(free_pg_port)
      say "Port $PG_PORT is taken by a server this installer does not manage: moving cluster \"main\" to port $port"
      pg_conftool "$ver" main set port "$port"
      PG_PORT=$port
    fi
    say "Starting PostgreSQL $ver"
    if [ "$HAS_SYSTEMD" -eq 1 ]; then
      systemctl enable -q postgresql 2>/dev/null || true
      systemctl start "postgresql@$ver-main"
    else
      pg_ctlcluster --skip-systemctl-redirect "$ver" main start
    fi
  fi
  for _ in $(seq 1 30); do
    pg_isready -q -h /var/run/postgresql -p "$PG_PORT" && return 0
    sleep 1
  done
  die "PostgreSQL $ver did not come up on port $PG_PORT; see /var/log/postgresql/postgresql-$ver-main.log"
}

# psql as the postgres superuser over the local socket; SQL on stdin keeps passwords out of argv.
pg_admin() { (cd / && runuser -u postgres -- psql -X -q -v ON_ERROR_STOP=1 -p "$PG_PORT" -d postgres "$@"); }
pg_role_exists() { [ "$(pg_admin -tA -c "SELECT 1 FROM pg_roles WHERE rolname = 'postlane'")" = 1 ]; }
pg_db_exists() { [ "$(pg_admin -tA -c "SELECT 1 FROM pg_database WHERE datname = 'postlane'")" = 1 ]; }
pg_set_password() { # $1 CREATE|ALTER, $2 password (base64url: safe inside a quoted literal)
  printf "\\set pw '%s'\n%s ROLE postlane LOGIN PASSWORD :'pw';\n" "$2" "$1" | pg_admin >/dev/null
}

new_password() {
  if command -v openssl >/dev/null 2>&1; then
    openssl rand -base64 32 | tr '+/' '-_' | tr -d '=\n'
  else
    head -c 32 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n'
  fi
}

DB_URL=""
DB_SOURCE=""
if [ -n "${DATABASE_URL:-}" ]; then
  DB_URL=$DATABASE_URL
  DB_SOURCE="DATABASE_URL from the environment"
elif [ -n "$CONFIGURED_URL" ]; then
  DB_URL=$CONFIGURED_URL
  DB_SOURCE="DATABASE_URL from $CONFIG_PATH"
fi

if [ -n "$DB_URL" ]; then
  say "Database: $DB_SOURCE"
  parts=$(url_parts "$DB_URL" 2>/dev/null) || die "DATABASE_URL ($DB_SOURCE) is not a valid URL"
  read -r DB_HOST DB_PORT DB_USER DB_PASS DB_NAME <<<"$parts"
  # A local server we manage: make sure it runs, and that the role and database the config
  # names still exist (created again with the stored password; an existing role is never touched).
  if is_local_host "$DB_HOST" && [ "$IS_ROOT" -eq 1 ] && pg_server_installed &&
    ! pg_isready -q -h "$DB_HOST" -p "$DB_PORT"; then
    pg_ensure_running
  fi
  if [ -z "${DATABASE_URL:-}" ] && is_local_host "$DB_HOST" && [ "$IS_ROOT" -eq 1 ] &&
    [ "$DB_USER" = postlane ] && [ "$DB_NAME" = postlane ] && [ "$DB_PASS" != - ] && pg_server_installed; then
    pg_ensure_running
    if ! pg_role_exists; then
      say "Re-creating role postlane with the password from $CONFIG_PATH"
      pg_set_password CREATE "$DB_PASS"
    fi
    pg_db_exists || { say "Creating database postlane"; pg_admin -c 'CREATE DATABASE postlane OWNER postlane' >/dev/null; }
  fi
else
  if [ "$IS_ROOT" -ne 1 ]; then
    die "no database configured, and creating a local one needs root." \
      "Either run as root:  $(as_root_hint)" \
      "or point Postlane at an existing database:  DATABASE_URL=postgres://user:pass@host:5432/db ./install.sh"
  fi
  say "Database: local PostgreSQL, role and database \"postlane\""
  pg_ensure_running
  password=$(new_password)
  [ ${#password} -ge 32 ] || die "could not generate a password (openssl or /dev/urandom)"
  if pg_role_exists; then
    # No config file knows its password: set a new one and store it below.
    say "Role postlane exists but no config holds its password: setting a new one"
    pg_set_password ALTER "$password"
  else
    say "Creating role postlane"
    pg_set_password CREATE "$password"
  fi
  pg_db_exists || { say "Creating database postlane"; pg_admin -c 'CREATE DATABASE postlane OWNER postlane' >/dev/null; }
  DB_URL="postgres://postlane:$password@127.0.0.1:$PG_PORT/postlane"
  unset password
fi

# --- postlane install: config file, migrations, first team and key ---------------------------
say "Configuring Postlane ($CONFIG_PATH)"
# The URL goes through the environment (not argv, which every user can read in ps); the CLI
# writes it when the config has none. --database-url only to replace a different stored one.
[ -n "$CONFIGURED_URL" ] && [ "$CONFIGURED_URL" != "$DB_URL" ] && CLI_ARGS+=(--database-url "$DB_URL")
set +e
INSTALL_JSON=$(DATABASE_URL=$DB_URL POSTLANE_CONFIG=$CONFIG_PATH "$NODE" bin/postlane.js install --json ${CLI_ARGS[@]+"${CLI_ARGS[@]}"} </dev/null)
status=$?
set -e
if [ $status -ne 0 ]; then
  printf '%s\n' "$INSTALL_JSON" | node -e '
    let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
      try { const { error } = JSON.parse(s); console.error(`${error.message}${error.problems.map((p) => `\n  - ${p}`).join("")}`); }
      catch { console.error(s); }
    });' >&2 || true
  die "postlane install failed (exit $status)"
fi

# "token<TAB>team name<TAB>team id<TAB>migrations applied" (token "-" when no key was created)
IFS=$'\t' read -r TOKEN TEAM_NAME TEAM_ID MIGRATED <<<"$(printf '%s' "$INSTALL_JSON" | node -e '
  const r = JSON.parse(require("fs").readFileSync(0, "utf8"));
  console.log([r.api_key ? r.api_key.token : "-", r.team.name, r.team.id, r.migrations_applied.length].join("\t"));')"
note "migrations applied: $MIGRATED; team: $TEAM_NAME ($TEAM_ID)"
if [ "$IS_ROOT" -eq 1 ]; then
  # `postlane` on the PATH, for the commands in the README. Never replaces a file that is not ours.
  if [ ! -e /usr/local/bin/postlane ] || [ -L /usr/local/bin/postlane ]; then
    ln -sfn "$REPO/bin/postlane.js" /usr/local/bin/postlane
    CLI=postlane
  else
    CLI="$REPO/bin/postlane.js"
  fi
else
  CLI="$REPO/bin/postlane.js"
fi
# A config file somewhere else than the default has to be named to every command.
[ -n "${POSTLANE_CONFIG:-}" ] && CLI="POSTLANE_CONFIG=$CONFIG_PATH $CLI"

# Printed now, before anything else can fail: the token exists only in this output.
if [ "$TOKEN" != - ]; then
  printf '\n%sAPI key (full access) - shown once, store it now:%s\n\n    %s\n\n' "$BOLD" "$RESET" "$TOKEN"
else
  note "team \"$TEAM_NAME\" exists already: kept its API keys (new key: $CLI keys create --name NAME)"
fi

# --- the service account ------------------------------------------------------------------------
# As root, Postlane runs as the system user `postlane`: it owns its state directory and reads the
# config file through its group (root:postlane 0640), which nobody else can read.
if [ "$IS_ROOT" -eq 1 ]; then
  STATE_DIR=/var/lib/postlane
  if ! getent passwd postlane >/dev/null; then
    say "Creating the system user postlane"
    useradd --system --user-group --home-dir "$STATE_DIR" --no-create-home --shell /usr/sbin/nologin \
      --comment "Postlane email appliance" postlane || die "useradd postlane failed"
  fi
  install -d -o postlane -g postlane -m 0750 "$STATE_DIR"
  if [ "$CONFIG_PATH" = /etc/postlane/config.json ]; then chgrp postlane /etc/postlane && chmod 0750 /etc/postlane; fi
  chgrp postlane "$CONFIG_PATH"
  chmod 0640 "$CONFIG_PATH"
  # The submission listener's self-signed certificate, written by postlane install beside the config.
  for pem in "$(dirname "$CONFIG_PATH")"/submission-tls-cert.pem "$(dirname "$CONFIG_PATH")"/submission-tls-key.pem; do
    [ -f "$pem" ] && chgrp postlane "$pem" && chmod 0640 "$pem"
  done
  as_postlane() { setpriv --reuid=postlane --regid=postlane --init-groups -- "$@"; }
  for needed in "$REPO/bin/postlane.js" "$REPO/dist/cli/index.js" "$CONFIG_PATH"; do
    as_postlane test -r "$needed" ||
      die "the postlane user cannot read $needed" "put the checkout where every user can read it (such as /opt/postlane), then run ./install.sh again"
  done
else
  STATE_DIR="${XDG_STATE_HOME:-$HOME/.local/state}/postlane"
fi

# --- start ------------------------------------------------------------------------------------
# Where the API answers, from the config file alone (that is all the service sees).
LISTEN=$(env -i PATH="$PATH" POSTLANE_CONFIG="$CONFIG_PATH" "$NODE" --input-type=module -e '
  const { pathToFileURL } = await import("node:url");
  const { loadConfig } = await import(pathToFileURL(process.argv[1] + "/dist/config/index.js").href);
  const c = loadConfig();
  const host = { "0.0.0.0": "127.0.0.1", "::": "::1" }[c.POSTLANE_HOST] ?? c.POSTLANE_HOST;
  console.log(`http://${host.includes(":") ? `[${host}]` : host}:${c.POSTLANE_PORT}`);' "$REPO")

UNIT=/etc/systemd/system/postlane.service
# The Node flags every start passes (README "Memory"), as `postlane service restart` does.
NODE_FLAGS=$("$NODE" --input-type=module -e '
  const { pathToFileURL } = await import("node:url");
  const { SERVICE_NODE_FLAGS } = await import(pathToFileURL(process.argv[1] + "/dist/cli/services/systemd-unit.js").href);
  console.log(SERVICE_NODE_FLAGS.join(" "));' "$REPO")
USE_SYSTEMD=0
[ "$HAS_SYSTEMD" -eq 1 ] && [ "$IS_ROOT" -eq 1 ] && USE_SYSTEMD=1
# `postlane service` (cli/services/systemd-unit.ts) starts, stops and reports the background process.
service_cli() { POSTLANE_CONFIG=$CONFIG_PATH POSTLANE_STATE_DIR=$STATE_DIR "$NODE" "$REPO/bin/postlane.js" service "$@" </dev/null; }

# Something else answering where Postlane should listen would fool the health check.
ensure_port_free() {
  if curl -sS --max-time 2 -o /dev/null "$LISTEN/health" 2>/dev/null; then
    die "something is already listening on $LISTEN (another Postlane started by hand?)" \
      "stop it, or choose another port: ./install.sh --port PORT"
  fi
}
start_service() {
  if [ "$USE_SYSTEMD" -eq 1 ]; then
    # A background instance from a run without systemd (the unit does not exist yet) goes first.
    [ -f "$UNIT" ] || service_cli stop >/dev/null
    systemctl is-active -q postlane || ensure_port_free
    # A checkout under /home or /root stays readable to the service; everything else it cannot see.
    local protect_home=yes
    case "$REPO/" in /home/* | /root/*) protect_home=read-only ;; esac
    local unit
    unit=$(
      cat <<EOF
[Unit]
Description=Postlane email sending appliance
Documentation=file://$REPO/README.md
After=network-online.target postgresql.service
Wants=network-online.target

[Service]
Type=simple
User=postlane
Group=postlane
WorkingDirectory=$REPO
Environment="POSTLANE_CONFIG=$CONFIG_PATH" "NODE_ENV=production"
ExecStart="$NODE" $NODE_FLAGS "$REPO/bin/postlane.js" serve
Restart=always
RestartSec=2
# SIGTERM drains the API and the running jobs (POSTLANE_SHUTDOWN_GRACE_SECONDS, 25 s by default).
KillSignal=SIGTERM
TimeoutStopSec=35
# Hardening: it writes only its state directory and talks to PostgreSQL, the relays and webhooks.
StateDirectory=postlane
StateDirectoryMode=0750
ReadWritePaths=$STATE_DIR
UMask=0027
NoNewPrivileges=yes
ProtectSystem=strict
ProtectHome=$protect_home
PrivateTmp=yes
PrivateDevices=yes
ProtectKernelTunables=yes
ProtectKernelModules=yes
ProtectKernelLogs=yes
ProtectControlGroups=yes
ProtectClock=yes
ProtectHostname=yes
RestrictNamespaces=yes
RestrictRealtime=yes
RestrictSUIDSGID=yes
LockPersonality=yes
RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6
SystemCallArchitectures=native
# Only to listen on a port below 1024 (POSTLANE_PORT); V8's JIT rules out MemoryDenyWriteExecute.
CapabilityBoundingSet=CAP_NET_BIND_SERVICE
AmbientCapabilities=CAP_NET_BIND_SERVICE

[Install]
WantedBy=multi-user.target
EOF
    )
    if [ ! -f "$UNIT" ] || [ "$(cat "$UNIT")" != "$unit" ]; then
      say "Writing $UNIT"
      printf '%s\n' "$unit" >"$UNIT"
      if command -v systemd-analyze >/dev/null 2>&1; then
        systemd-analyze verify "$UNIT" >&2 || die "systemd-analyze verify $UNIT failed (above)"
      fi
      systemctl daemon-reload
    fi
    if systemctl is-active -q postlane; then
      say "Restarting postlane.service (picks up the new build and config)"
      systemctl enable -q postlane
      systemctl restart postlane
    else
      say "Starting postlane.service"
      systemctl enable -q --now postlane
    fi
  else
    service_cli status >/dev/null || ensure_port_free
    say "Starting Postlane in the background as $([ "$IS_ROOT" -eq 1 ] && echo postlane || id -un) (log: $STATE_DIR/postlane.log)"
    service_cli restart >/dev/null || die "postlane service restart failed"
    install_logrotate
  fi
}

# Background mode logs to a file: logrotate keeps 14 days of it (cli/services/log-rotation.ts). Without root,
# the same rule runs from your crontab: see docs/operations.md ("Logs").
LOGROTATE=/etc/logrotate.d/postlane
install_logrotate() {
  [ "$IS_ROOT" -eq 1 ] || return 0
  command -v logrotate >/dev/null 2>&1 || apt_install logrotate
  local rule
  rule=$("$NODE" --input-type=module -e '
    const { pathToFileURL } = await import("node:url");
    const { logrotateConfig } = await import(pathToFileURL(process.argv[1] + "/dist/cli/services/log-rotation.js").href);
    process.stdout.write(logrotateConfig(process.argv[2], { user: "postlane", group: "postlane" }));' "$REPO" "$STATE_DIR/postlane.log")
  if [ "$(cat "$LOGROTATE" 2>/dev/null)" != "$rule" ]; then
    say "Writing $LOGROTATE (daily, 14 kept)"
    printf '%s\n' "$rule" >"$LOGROTATE"
    chmod 0644 "$LOGROTATE"
  fi
}

service_failed() {
  if [ "$USE_SYSTEMD" -eq 1 ]; then
    journalctl -u postlane -n 20 --no-pager >&2 2>/dev/null || true
    die "$1" "see: journalctl -u postlane"
  else
    service_cli logs -n 20 >&2 2>/dev/null || true
    die "$1" "see: $CLI service logs"
  fi
}

wait_for_health() {
  for _ in $(seq 1 60); do
    if curl -fsS --max-time 2 -o /dev/null "$LISTEN/health" 2>/dev/null; then return 0; fi
    [ "$USE_SYSTEMD" -eq 1 ] || service_cli status >/dev/null || service_failed "Postlane exited at start"
    sleep 0.5
  done
  service_failed "Postlane did not answer $LISTEN/health within 30 s"
}

if [ "$START" -eq 0 ]; then
  if { [ "$USE_SYSTEMD" -eq 1 ] && systemctl is-active -q postlane; } || { [ "$USE_SYSTEMD" -eq 0 ] && service_cli status >/dev/null; }; then
    printf 'Note: the Postlane already running still runs the previous build.\n'
  fi
  printf 'Installed, not started (--no-start). Start with: ./install.sh  (or: %s service restart)\n' "$CLI"
  exit 0
fi

start_service
wait_for_health
cat <<EOF
Postlane is running at $LISTEN  (config: $CONFIG_PATH)
    $CLI service status|stop|restart|logs
Next, send a test email with the official SDK (README, "Quickstart"):
    npm i resend
    RESEND_BASE_URL=$LISTEN RESEND_API_KEY=re_... node send.mjs
    $CLI outbox
EOF
