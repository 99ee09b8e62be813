#!/bin/sh
# Before `copier update`: copier reads the template again from where the
# answers file says this project came from. A relative path (a copy made
# with `copier copy . ../x`) is relative to wherever copier ran then, so
# it cannot be found from here, and copier would only say "Unknown
# revision". Say what to do instead.
source=$(sed -n 's/^_src_path: *//p' .copier-answers.yml | tr -d "'\"")
case "$source" in
  /* | *://* | gh:* | gl:* | git@*) exit 0 ;;
esac
echo "The template is named by a relative path ('$source') in .copier-answers.yml," >&2
echo "which copier cannot find from here. Set _src_path there to the template's" >&2
echo "absolute path or git URL, commit, and run make update again." >&2
exit 1
