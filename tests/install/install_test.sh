#!/usr/bin/env bash
# The installed tree (docs/admin.md "Installing"): `cmake --install` into a
# staging prefix under the build folder, then the installed programs alone —
# their help and version, the man pages, the completion, the policies and
# config, `--check-config`, and a local cluster of the installed schedd and
# one installed nodeagent running a job to completion.
#   install_test.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
work="$build/install-test"
stage="$work/stage"
fail() { echo "FAIL: $*" >&2; exit 1; }
cleanup() {
  [ -x "$stage/bin/sched" ] && XDG_STATE_HOME="$work/state" "$stage/bin/sched" cluster down \
    >/dev/null 2>&1 || true
}
trap cleanup EXIT
cleanup
rm -rf "$work"
mkdir -p "$work"
cmake --install "$build" --prefix "$stage" >"$work/install.log" || fail "cmake --install"
# Nothing from the build or source tree may stand in for the installed files.
unset SCHED_POLICY_DIR SCHED_PLUGIN_DIR SCHED_BIN_DIR SCHED_ENDPOINT
cd "$work"

# Files where an admin looks for them.
for f in bin/sched bin/sched-mpi-agent sbin/schedd sbin/nodeagent etc/sched/sched.toml etc/sched/nodeagent.toml \
  etc/sched/policies/easy_backfill.lua etc/sched/policies/lib/easy.lua \
  share/sched/policies/easy_backfill.lua share/sched/policies/lib/malleable.lua \
  lib/systemd/system/schedd.service lib/systemd/system/nodeagent.service \
  share/man/man1/sched.1 share/man/man1/sched-mpi-agent.1 share/man/man8/schedd.8 share/man/man8/nodeagent.8 \
  share/bash-completion/completions/sched include/sched/malleable.h; do
  [ -e "$stage/$f" ] || fail "not installed: $f"
done
ls "$stage"/lib*/sched/plugins/libsched_power_model.so >/dev/null || fail "no model plugin"
ls "$stage"/lib*/sched/plugins/libsched_power_rapl.so >/dev/null || fail "no rapl plugin"
grep -q "^ExecStart=.*/schedd --config .*/sched/sched.toml" "$stage/lib/systemd/system/schedd.service" \
  || fail "schedd.service has no ExecStart with the config"
grep -q "^policy_dir = \".*/sched/policies\"" "$stage/etc/sched/sched.toml" \
  || fail "the installed sched.toml does not point at the site's policies"

# The programs answer.
"$stage/bin/sched" --version | grep -q "sched" || fail "sched --version"
"$stage/bin/sched" --help >"$work/help.txt" || fail "sched --help"
"$stage/sbin/schedd" --version | grep -q "schedd" || fail "schedd --version"
"$stage/sbin/nodeagent" --version | grep -q "nodeagent" || fail "nodeagent --version"
"$stage/bin/sched-mpi-agent" --help | grep -q "HOST COMMAND" || fail "sched-mpi-agent --help"
grep -q "^\.TH SCHED-MPI-AGENT \"1\"" "$stage/share/man/man1/sched-mpi-agent.1" \
  || fail "sched-mpi-agent.1 is no man page"
grep -q "^\.TH SCHEDD \"8\"" "$stage/share/man/man8/schedd.8" || fail "schedd.8 is no man page"
grep -q -- "check\\\\-config" "$stage/share/man/man8/schedd.8" || fail "schedd.8 misses options"

# The completion lists every subcommand `sched --help` lists, and completes.
subcommands=$(sed -n '/^Subcommands:/,/^$/p' "$work/help.txt" | awk 'NR>1 && NF {print $1}')
[ -n "$subcommands" ] || fail "no subcommands in sched --help"
for sub in $subcommands; do
  got=$(bash -c 'source "$1"; COMP_WORDS=(sched "$2"); COMP_CWORD=1; _sched; printf "%s\n" "${COMPREPLY[@]}"' \
    _ "$stage/share/bash-completion/completions/sched" "$sub")
  grep -qx "$sub" <<<"$got" || fail "completion of '$sub' gives: $got"
done
got=$(bash -c 'source "$1"; COMP_WORDS=(sched cluster u); COMP_CWORD=2; _sched; echo "${COMPREPLY[*]}"' \
  _ "$stage/share/bash-completion/completions/sched")
[ "$got" = "up" ] || fail "completion of 'sched cluster u' gives '$got'"

# --check-config: the installed config pointed at the staged paths is usable...
sed -e "s|^policy_dir = .*|policy_dir = \"$stage/etc/sched/policies\"|" \
  -e "s|^state_dir = .*|state_dir = \"$work/schedd-state\"|" "$stage/etc/sched/sched.toml" >sched.toml
"$stage/sbin/schedd" --check-config --config sched.toml >check.out 2>&1 || fail "check-config: $(cat check.out)"
grep -q "sched.toml: ok" check.out || fail "check-config says: $(cat check.out)"
[ ! -e "$work/schedd-state" ] || fail "check-config made the state folder"
# ...and a wrong one is refused, naming file and key, starting nothing.
sed 's|^policy = .*|policy = "no_such_policy"|' sched.toml >bad.toml
if "$stage/sbin/schedd" --check-config --config bad.toml >check.out 2>&1; then fail "bad policy passed"; fi
grep -q "bad.toml: scheduler.policy: no file no_such_policy" check.out || fail "check-config: $(cat check.out)"
printf '[scheduler]\ntick = 1\n' >typo.toml
if "$stage/sbin/schedd" --check-config --config typo.toml >check.out 2>&1; then fail "typo passed"; fi
grep -q "typo.toml: scheduler.tick: unknown key" check.out || fail "check-config: $(cat check.out)"
sed "s|^\(secret-key-file\) = .*|\1 = \"$work/none.key\"|" "$stage/etc/sched/nodeagent.toml" >agent.toml
if "$stage/sbin/nodeagent" --check-config --config agent.toml >check.out 2>&1; then
  fail "nodeagent check-config passed without keys"
fi
grep -q "agent.toml: secret-key-file: no such file: $work/none.key" check.out \
  || fail "nodeagent check-config: $(cat check.out)"
"$stage/bin/sched" keys new n1 -o "$work/keys" >/dev/null 2>&1
"$stage/bin/sched" keys new schedd -o "$work/keys" >/dev/null 2>&1
"$stage/sbin/nodeagent" --check-config --config agent.toml --secret-key-file "$work/keys/n1.key" \
  --server-public-key-file "$work/keys/schedd.pub" --spool-dir "$work/spool" >check.out 2>&1 \
  || fail "nodeagent check-config: $(cat check.out)"
# The installed nodeagent looks for plugins in its own prefix.
if "$stage/sbin/nodeagent" --check-config --config agent.toml --power-meter no_such \
  --secret-key-file "$work/keys/n1.key" --server-public-key-file "$work/keys/schedd.pub" \
  >check.out 2>&1; then fail "an unknown power meter passed"; fi
grep -q "power-meter: .*not found: no libsched_power_no_such.so in $stage/lib[^,]*/sched/plugins" \
  check.out || fail "nodeagent does not look in the installed plugins: $(cat check.out)"

# A local cluster of the installed daemons runs a job; the policy is the
# installed one, not the source tree's.
export XDG_STATE_HOME="$work/state"
port=$((20000 + RANDOM % 20000))
"$stage/bin/sched" cluster up --nodes 1 --port "$port" >up.out 2>&1 || fail "cluster up: $(cat up.out)"
"$stage/bin/sched" policy >policy.out 2>&1 || fail "sched policy: $(cat policy.out)"
grep -q "$stage/share/sched/policies/easy_backfill.lua" policy.out \
  || fail "schedd does not run the installed policy: $(cat policy.out)"
id=$("$stage/bin/sched" submit --parsable --wrap "echo installed-ok") || fail "submit"
for _ in $(seq 1 150); do
  state=$("$stage/bin/sched" acct -j "$id" --json | grep -o '"state": *"[A-Za-z_]*"' || true)
  case "$state" in *COMPLETED*) break ;; *FAILED* | *CANCELLED*) fail "job $id: $state" ;; esac
  sleep 0.1
done
case "$state" in *COMPLETED*) ;; *) fail "job $id did not complete: $state" ;; esac
grep -q installed-ok "sched-$id.out" || fail "job output: $(cat "sched-$id.out" 2>&1)"
echo "install test passed"
