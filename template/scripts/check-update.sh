#!/bin/sh
# After `copier update`: fail loudly on anything left to merge by hand.
# copier writes conflict markers (or .rej files with --conflict rej) and
# still exits 0, so a half-merged project would otherwise go unnoticed.
set -u
rejects=$(find . -name '*.rej' -not -path './.venv/*' -not -path './.git/*')
markers=$(grep -rIlE --exclude-dir=.git --exclude-dir=.venv '^(<<<<<<<|>>>>>>>) ' . || true)
if [ -n "$rejects$markers" ]; then
  echo "copier update left work to merge by hand:" >&2
  for path in $rejects $markers; do echo "  $path" >&2; done
  echo "Resolve each, delete the .rej files, then run the tests." >&2
  exit 1
fi
echo "Update merged cleanly. Now: uv sync && make lint test"
