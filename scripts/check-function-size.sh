#!/usr/bin/env bash
# check-function-size.sh: lists every C++ function in host/, sdk/ and plugins/ longer than the limit (100 lines,
# signature to closing brace) and fails if there is one. The equivalent of clang-tidy's
# readability-function-size LineThreshold without parsing LibTorch: universal-ctags gives each function's start
# and end line. Usage: scripts/check-function-size.sh [max_lines] [dirs...]  (ctest: lint.function_size)
set -euo pipefail
cd "$(dirname "$0")/.."
max=${1:-100}
shift || true
dirs=("$@")
[ ${#dirs[@]} -gt 0 ] || dirs=(host sdk plugins)

if ! ctags --version 2>/dev/null | grep -q 'Universal Ctags'; then
  echo "check-function-size: needs universal-ctags (apt-get install -y universal-ctags)" >&2
  exit 2
fi

# Functions only (kind f: definitions with bodies, including members defined in classes); .h files are C++ here.
# Output per function: path:line: name (N lines).
long=$(ctags -R --languages=C++ --langmap=C++:+.h --kinds-C++=f --fields=+ne --output-format=json -f - \
         "${dirs[@]}" 2>/dev/null |
       awk -v max="$max" '
         {
           path = $0; sub(/.*"path": "/, "", path); sub(/".*/, "", path)
           name = $0; sub(/.*"name": "/, "", name); sub(/".*/, "", name)
           scope = ""
           if ($0 ~ /"scope": "/) { scope = $0; sub(/.*"scope": "/, "", scope); sub(/".*/, "", scope); scope = scope "::" }
           if ($0 !~ /"end": [0-9]+/ || $0 !~ /"line": [0-9]+/) next
           line = $0; sub(/.*"line": /, "", line); sub(/[^0-9].*/, "", line)
           end = $0; sub(/.*"end": /, "", end); sub(/[^0-9].*/, "", end)
           n = end - line + 1
           if (n > max) printf "%s:%d: %s%s (%d lines)\n", path, line, scope, name, n
         }' | sort)

if [ -n "$long" ]; then
  echo "check-function-size: functions over $max lines (split them into named helpers):"
  echo "$long"
  exit 1
fi
echo "check-function-size: no function in ${dirs[*]} is over $max lines"
