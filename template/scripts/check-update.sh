#!/bin/sh
# After `copier update`: finish what copier cannot, then fail loudly on
# anything left to merge by hand.
set -u

# 0.3.0 moved the code AgentCore runs into app/. copier moves the files the
# template owns; files you own (your tools, prompt, policy) stay behind in
# the old package folder, so move each one whose new place is still free.
for package in */; do
  package=${package%/}
  [ -d "app/$package" ] || continue
  find "$package" -type f ! -name '*.rej' ! -path '*/__pycache__/*' | while read -r old; do
    new="app/$old"
    if [ -e "$new" ]; then
      echo "kept $old: app/ already has $new; merge the two by hand" >&2
    else
      mkdir -p "$(dirname "$new")" && mv "$old" "$new" && echo "moved $old -> $new"
    fi
  done
  find "$package" -name __pycache__ -type d -prune -exec rm -rf {} +
  find "$package" -type d -empty -delete
done

# The migrations below come with an update only (copier.yml leaves them out
# of a new copy), and each goes once it has run clean, so a project never
# keeps them. One that fails stays, to run again when you run this check
# again after merging by hand.
moving=0
migrate() {
  [ -f "scripts/$1" ] || return 0
  if uv run --no-project --quiet python "scripts/$1"; then
    rm -f "scripts/$1"
  else
    moving=1
  fi
}
# 0.4.0 keeps the files you own in app/<package>/yours/. copier creates its
# skeleton; scripts/move_yours.py moves your files from before 0.4.0 over it
# (rewriting their imports, and a TOOLS list of bare tools into rows), once.
migrate move_yours.py
# 0.7.0 put the package in folders by role; code of yours from before it
# imports the old module names, which scripts/keep_old_imports.py keeps
# importable, without editing your files.
migrate keep_old_imports.py

# 0.15.0 made README.md the template's, merged like its other files; the
# first update from an older release merges it once more, three-way, with
# the README the project was made from, which copier could not find.
uv run --no-project --quiet python scripts/readme_merge.py || true

# copier writes conflict markers (or .rej files with --conflict rej) and
# still exits 0, so a half-merged project would otherwise go unnoticed.
rejects=$(find . -name '*.rej' -not -path './.venv/*' -not -path './.git/*')
markers=$(grep -rIlE --exclude-dir=.git --exclude-dir=.venv '^(<<<<<<<|>>>>>>>) ' . || true)
leftovers=$(for package in */; do [ -d "app/$package" ] && echo "${package%/}"; done)
if [ -n "$rejects$markers$leftovers" ] || [ "$moving" = 1 ]; then
  echo "copier update left work to merge by hand:" >&2
  for path in $rejects $markers $leftovers; do echo "  $path" >&2; done
  echo "Resolve each: a .rej holds the part of a change copier could not merge into" >&2
  echo "the file beside it (from 0.2.0, your edit of a file that moved into app/);" >&2
  echo "conflict markers show both sides in the file itself; a file kept above must be" >&2
  echo "merged into yours/ by hand. Then delete the .rej files and the old files, and" >&2
  echo "run the tests." >&2
  exit 1
fi
# What a release asks of code of yours, which no update changes: each step
# found in the project's files, listed, and the update stops there.
uv run --no-project --quiet python scripts/steps_left.py || exit 1
echo "Update merged cleanly. Now: make install lint test"
