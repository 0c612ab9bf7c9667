#!/usr/bin/env bash
# Checks that every C and C++ source follows the repository's .clang-format
# (clang-format --dry-run -Werror); prints the offending places and fails if
# any. `scripts/check-format.sh --fix` rewrites the files instead.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
mapfile -t files < <(git ls-files '*.c' '*.h' '*.cpp' '*.hpp')
if [ "${1:-}" = "--fix" ]; then
  clang-format -i "${files[@]}"
  exit 0
fi
if clang-format --dry-run -Werror "${files[@]}"; then
  echo "format: ${#files[@]} files follow .clang-format"
else
  echo "format: files above differ from .clang-format (scripts/check-format.sh --fix rewrites them)" >&2
  exit 1
fi
