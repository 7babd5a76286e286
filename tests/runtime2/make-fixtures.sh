#!/usr/bin/env bash
# Write the flue 2.1.0 crash fixtures: each scenario of scenarios.mjs run by the real
# @flue/runtime 2.1.0 (installed by setup.sh) against a fresh database and SIGKILLed at its crash
# point, then the runtime's own classification of every submission beside it.
#
#   tests/runtime2/make-fixtures.sh [OUT_DIR]            every scenario (OUT_DIR defaults to
#                                                        tests/fixtures/flue-2.1.0)
#   ONLY="mid-stream overflow" tests/runtime2/make-fixtures.sh     a subset; others are kept
#   PAR=n                                                 scenarios at a time (default 2)
#
# For each scenario NAME:
#   NAME.db.gz                the database the killed runtime left: its write-ahead log checkpointed
#                             into the file by SQLite, the journal mode set back to DELETE and the
#                             file VACUUMed (no row is read or changed by this script), gzipped
#   NAME.classification.json  classify.mjs on it: the runtime's own classification of each
#                             submission (checked against what the scenario aims for)
#   NAME.fold.json            fold.mjs on it: the runtime's own fold of each conversation stream
# Exits 1 if a scenario missed its crash point or the state it aims for (a crash that landed
# elsewhere on a loaded machine): run it again.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OUT="${1:-$HERE/../fixtures/flue-2.1.0}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
setup="$(bash "$HERE/setup.sh")"
RUN_DIR="$(printf '%s\n' "$setup" | tail -n 2 | head -n 1)"
NODE="$(printf '%s\n' "$setup" | tail -n 1)"
WORK="$(mktemp -d -t turnscope-flue2-fixtures.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
cd "$RUN_DIR"

mapfile -t ALL < <("$NODE" --no-warnings -e "import('./scenarios.mjs').then((m) => console.log(Object.keys(m.SCENARIOS).filter((k) => m.SCENARIOS[k].fixture !== false).join('\n')))")
NAMES=()
for n in "${ALL[@]}"; do
  if [[ -n "${ONLY:-}" && " $ONLY " != *" $n "* ]]; then continue; fi
  NAMES+=("$n")
done
[[ ${#NAMES[@]} -gt 0 ]] || { echo "make-fixtures.sh: no scenario selected (ONLY=$ONLY)" >&2; exit 2; }

one() { # NAME
  local n="$1" rc=0
  # ({ subshell + exec; } 2>/dev/null keeps bash from printing "Killed" for the expected SIGKILL.)
  { (exec timeout 120 "$NODE" --no-warnings crash.mjs --scenario "$n" --db "$WORK/$n.db" \
      --side "$WORK/$n.side.jsonl" >"$WORK/$n.log" 2>&1); } 2>/dev/null || rc=$?
  if [[ $rc -ne 137 ]]; then
    echo "make-fixtures.sh: $n: exit status $rc, not the SIGKILL at its crash point ($WORK/$n.log):" >&2
    tail -n 5 "$WORK/$n.log" >&2
    return 1
  fi
  "$NODE" --no-warnings -e "
const { DatabaseSync } = require('node:sqlite');
const db = new DatabaseSync(process.argv[1]);
const r = db.prepare('PRAGMA wal_checkpoint(TRUNCATE)').get();
if (r.busy) { console.error('checkpoint busy'); process.exit(1); }
db.exec('PRAGMA journal_mode = DELETE');
db.exec('VACUUM');
db.close();" "$WORK/$n.db"
  rm -f "$WORK/$n.db-wal" "$WORK/$n.db-shm"
  if ! "$NODE" --no-warnings --import ./register-hooks.mjs classify.mjs "$WORK/$n.db" --check-scenario "$n" \
      >"$WORK/$n.classification.json" 2>"$WORK/$n.classify.log"; then
    echo "make-fixtures.sh: $n: the crash landed elsewhere than the scenario aims:" >&2
    cat "$WORK/$n.classify.log" >&2
    return 1
  fi
  "$NODE" --no-warnings --import ./register-hooks.mjs fold.mjs "$WORK/$n.db" >"$WORK/$n.fold.json"
  gzip -9 -n -c "$WORK/$n.db" >"$OUT/$n.db.gz"
  cp "$WORK/$n.classification.json" "$OUT/$n.classification.json"
  cp "$WORK/$n.fold.json" "$OUT/$n.fold.json"
  echo "make-fixtures.sh: $n: $(wc -c <"$OUT/$n.db.gz") bytes gzipped" >&2
}

PAR="${PAR:-2}"
failed=0
running=0
for n in "${NAMES[@]}"; do
  one "$n" &
  running=$((running + 1))
  if ((running >= PAR)); then
    wait -n || failed=$((failed + 1))
    running=$((running - 1))
  fi
done
while ((running > 0)); do
  wait -n || failed=$((failed + 1))
  running=$((running - 1))
done
echo "make-fixtures.sh: ${#NAMES[@]} scenarios, $failed failed; fixtures in $OUT" >&2
((failed == 0))
