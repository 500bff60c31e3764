#!/usr/bin/env bash
# Puts a dupctl binary in $DUPCTL_BIN_DIR, for the GitHub Action
# (action.yml) and the GitLab template (ci/gitlab/dupctl.gitlab-ci.yml).
#
#   DUPCTL_VERSION  a release tag (v0.5.0): download its archive and check it
#                   against the release's checksums.txt; or "source": build
#                   $DUPCTL_SOURCE with go build -buildvcs=true (the commit is
#                   recorded, so `dupctl version` names it)
#   DUPCTL_SOURCE   the dupctl source tree to build (source only)
#   DUPCTL_BIN_DIR  where the binary goes
#   DUPCTL_RELEASES where releases are downloaded from (default: GitHub's)
# On GitHub the folder is added to $GITHUB_PATH and named in $GITHUB_OUTPUT.
set -euo pipefail

version=${DUPCTL_VERSION:-source}
bin_dir=${DUPCTL_BIN_DIR:?DUPCTL_BIN_DIR is not set}
mkdir -p "$bin_dir"

fail() { echo "dupctl install: $*" >&2; exit 2; }

build_source() {
  local src=${DUPCTL_SOURCE:?DUPCTL_SOURCE is not set}
  [ -f "$src/cmd/dupctl/main.go" ] || fail "$src holds no dupctl source (no cmd/dupctl/main.go)"
  # go build stamps the commit only from a .git folder; a worktree's or a
  # submodule's .git is a file, so their commit and date go in by ldflags
  # (as a release's do; whether the tree was modified is then not said).
  vcs_ldflags=()
  local top commit date pkg=github.com/dupctl/dupctl/internal/platform/buildinfo
  if [ ! -d "$src/.git" ] && top=$(git -C "$src" rev-parse --show-toplevel 2>/dev/null) &&
    [ "$(cd "$top" && pwd -P)" = "$(cd "$src" && pwd -P)" ]; then
    commit=$(git -C "$src" rev-parse HEAD)
    date=$(TZ=UTC git -C "$src" log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ)
    vcs_ldflags=(-ldflags "-X $pkg.Commit=$commit -X $pkg.Date=$date")
  fi
  command -v go >/dev/null 2>&1 || fail "version: source builds with Go: add actions/setup-go before this step, or name a release"
  echo "building dupctl from $src (the first build compiles every dependency: a minute or more)"
  (cd "$src" && CGO_ENABLED=0 go build -buildvcs=true -trimpath "${vcs_ldflags[@]}" -o "$bin_dir/dupctl$(go env GOEXE)" ./cmd/dupctl)
}

# platform prints the release archive's os_arch for this machine.
platform() {
  local os arch
  case "${RUNNER_OS:-$(uname -s)}" in
    Linux | linux) os=linux ;;
    macOS | Darwin) os=darwin ;;
    Windows | MINGW* | MSYS*) os=windows ;;
    *) fail "no release archive for the OS ${RUNNER_OS:-$(uname -s)}" ;;
  esac
  case "${RUNNER_ARCH:-$(uname -m)}" in
    X64 | x86_64 | amd64) arch=amd64 ;;
    ARM64 | aarch64 | arm64) arch=arm64 ;;
    *) fail "no release archive for the architecture ${RUNNER_ARCH:-$(uname -m)}" ;;
  esac
  echo "${os}_${arch}"
}

download_release() {
  local tag=$1 plat ext base tmp archive want got
  [[ $tag =~ ^v?[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$ ]] ||
    fail "version must be a release tag such as v0.5.0, or source; got \"$tag\""
  plat=$(platform)
  ext=tar.gz
  [[ $plat == windows_* ]] && ext=zip
  base=${DUPCTL_RELEASES:-https://github.com/dupctl/dupctl/releases/download}/v${tag#v}
  archive="dupctl_${tag#v}_${plat}.${ext}"
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' RETURN
  echo "downloading $base/$archive"
  curl -fsSL --retry 3 -o "$tmp/$archive" "$base/$archive" || { echo "cannot download $base/$archive" >&2; exit 3; }
  curl -fsSL --retry 3 -o "$tmp/checksums.txt" "$base/checksums.txt" || { echo "cannot download $base/checksums.txt" >&2; exit 3; }
  want=$(awk -v f="$archive" '$2 == f { print $1 }' "$tmp/checksums.txt")
  [ -n "$want" ] || fail "checksums.txt of $tag does not list $archive"
  got=$( (sha256sum "$tmp/$archive" 2>/dev/null || shasum -a 256 "$tmp/$archive") | awk '{ print $1 }')
  [ "$got" = "$want" ] || fail "$archive: sha256 $got, checksums.txt says $want"
  if [ "$ext" = zip ]; then
    unzip -q -o "$tmp/$archive" dupctl.exe -d "$bin_dir"
  else
    tar -xzf "$tmp/$archive" -C "$bin_dir" dupctl
  fi
}

if [ "$version" = source ]; then
  build_source
else
  download_release "$version"
fi

"$bin_dir/dupctl" version
if [ -n "${GITHUB_PATH:-}" ]; then echo "$bin_dir" >>"$GITHUB_PATH"; fi
if [ -n "${GITHUB_OUTPUT:-}" ]; then echo "path=$bin_dir" >>"$GITHUB_OUTPUT"; fi
