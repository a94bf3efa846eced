# Shared by Fuzz/*/run.sh: the compiler flags of a fuzz build, and `module NAME FILES...`, which
# compiles files into a static library and module of their own under $work/modules (the packages
# a fuzz target imports, with the same sanitizer and coverage flags). Needs $work.
flags=(-O -sanitize=fuzzer,address -parse-as-library -package-name CoreLocation)
quiet() { grep -v 'Cannot export local symbol' >&2 || true; }
mkdir -p "$work/modules"
module() {
  local name=$1
  shift
  swiftc "${flags[@]}" -module-name "$name" -I "$work/modules" \
    -emit-module -emit-module-path "$work/modules/" \
    -emit-library -static -o "$work/modules/lib$name.a" "$@" 2> >(quiet)
}
