#!/usr/bin/env bash
# gen-docs.sh: regenerates the generated blocks of the Markdown docs from the binary; --check only reports stale ones.
#
#   scripts/gen-docs.sh [--check] [file.md ...]      (default: every *.md outside build*/, runs/, out/)
#
# A generated block is the text between a marker line and an end line:
#   <!-- generated: ethost --describe reader/tsv --format markdown -->
#   ... (replaced by that command's output, between two blank lines)
#   <!-- end generated -->
# Only `ethost ...` commands are run: with $ETHOST (default build/bin/ethost) and, for hermetic output, the in-tree
# plugins only (--no-default-plugins --plugin-dir $ETHOST_PLUGIN_DIR, default build/bin/plugins; no
# ETHOST_PLUGIN_PATH); the command's stderr is shown only when it fails.
# Exit codes: 0 up to date (or rewritten), 1 stale blocks with --check, 2 usage or a malformed block, 3 a command
# failed.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
ETHOST=${ETHOST:-$root/build/bin/ethost}
ETHOST_PLUGIN_DIR=${ETHOST_PLUGIN_DIR:-$root/build/bin/plugins}
check=0
files=()
for a in "$@"; do
  case "$a" in
    --check) check=1 ;;
    -h | --help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "gen-docs.sh: unknown option $a (use --check)" >&2; exit 2 ;;
    *) files+=("$a") ;;
  esac
done
if [ ${#files[@]} -eq 0 ]; then
  while IFS= read -r f; do files+=("$f"); done < <(
    cd "$root" && find . \( -name '.git' -o -name 'build*' -o -name 'runs' -o -name 'out' -o -name '.cache' \) -prune \
      -o -name '*.md' -type f -print | sed 's|^\./||' | sort)
  for i in "${!files[@]}"; do files[$i]="$root/${files[$i]}"; done
fi
if [ ! -x "$ETHOST" ]; then
  echo "gen-docs.sh: $ETHOST is not an executable: build first (scripts/build.sh) or set ETHOST" >&2
  exit 2
fi

begin_re='^<!-- generated: (.*) -->[[:space:]]*$'
end_re='^<!-- end generated -->[[:space:]]*$'
stale=0
tmp=$(mktemp)
trap 'rm -f "$tmp" "$tmp.err"' EXIT
for f in "${files[@]}"; do
  grep -q '^<!-- generated: ' "$f" || continue
  : >"$tmp"
  in_block=0
  lineno=0
  while IFS= read -r line || [ -n "$line" ]; do
    lineno=$((lineno + 1))
    if [ $in_block -eq 1 ]; then
      if [[ $line =~ $end_re ]]; then
        printf '%s\n' "$line" >>"$tmp"
        in_block=0
      elif [[ $line =~ $begin_re ]]; then
        echo "$f:$lineno: a generated block starts inside another (missing <!-- end generated -->)" >&2
        exit 2
      fi
      continue
    fi
    printf '%s\n' "$line" >>"$tmp"
    [[ $line =~ $begin_re ]] || continue
    cmd=${BASH_REMATCH[1]}
    read -r -a words <<<"$cmd"
    if [ "${words[0]}" != "ethost" ]; then
      echo "$f:$lineno: only 'ethost ...' commands are generated, got: $cmd" >&2
      exit 2
    fi
    if ! out=$(env -u ETHOST_PLUGIN_PATH "$ETHOST" --no-default-plugins --plugin-dir "$ETHOST_PLUGIN_DIR" \
      "${words[@]:1}" 2>"$tmp.err"); then
      echo "$f:$lineno: '$cmd' failed:" >&2
      cat "$tmp.err" >&2
      exit 3
    fi
    printf '\n%s\n\n' "$out" >>"$tmp"
    in_block=1
  done <"$f"
  if [ $in_block -eq 1 ]; then
    echo "$f: a generated block has no <!-- end generated --> line" >&2
    exit 2
  fi
  if ! cmp -s "$f" "$tmp"; then
    rel=${f#"$root"/}
    if [ $check -eq 1 ]; then
      echo "stale: $rel (run scripts/gen-docs.sh to regenerate it)"
      diff -u "$f" "$tmp" | sed -n '3,40p' || true
      stale=1
    else
      cp "$tmp" "$f"
      echo "regenerated: $rel"
    fi
  fi
done
exit $stale
