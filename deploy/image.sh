#!/usr/bin/env bash
# The container image with podman, for the tests and for a host without Docker.
# Podman runs here without a daemon, as root; on a machine that is itself a container
# (as CI's is) it builds with --isolation chroot and runs containers with runc on the
# host's network, as the tests do.
#
# Usage (as root, from anywhere):
#   image.sh [setup]      install podman, runc and debootstrap if missing, and make the
#                         base image localhost/debian:bookworm with debootstrap (minbase)
#                         unless it exists already (about a minute, once per machine)
#   image.sh build [TAG]  setup, then build deploy/Dockerfile on that base as TAG
#                         (default localhost/pbem:latest, as compose.yaml names it);
#                         podman's layer cache makes a build of unchanged sources take
#                         seconds
#   image.sh run-flags    print the flags every `podman run` here needs, one per line
#
# Settings (environment): PBEM_IMAGE_BASE [localhost/debian:bookworm]
#   PBEM_IMAGE_SUITE [bookworm]
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BASE=${PBEM_IMAGE_BASE:-localhost/debian:bookworm}
SUITE=${PBEM_IMAGE_SUITE:-bookworm}
PACKAGES=(podman runc debootstrap)
# runc: the runtime available in Debian without crun; the host's network (no slirp or
# bridge inside a container); limits no higher than this machine grants.
RUN_FLAGS=(--runtime runc --network host --ulimit nofile=4096:4096 --ulimit nproc=4096:4096)

log() { printf 'image: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

install_tools() {
    local missing=() pkg
    for pkg in "${PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' \
            || missing+=("$pkg")
    done
    ((${#missing[@]} == 0)) && return 0
    [[ $(id -u) -eq 0 ]] || die "run as root to install ${missing[*]}"
    log "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null 2>&1 || {
        apt-get update -q >/dev/null
        apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
    }
}

make_base() {
    if podman image exists "$BASE"; then
        return 0
    fi
    [[ $(id -u) -eq 0 ]] || die "run as root to make $BASE with debootstrap"
    local dir started
    dir=$(mktemp -d /var/tmp/pbem-base.XXXXXX)
    trap 'rm -rf "$dir"' RETURN
    started=$SECONDS
    log "making $BASE with debootstrap --variant=minbase $SUITE (once per machine)"
    debootstrap --variant=minbase "$SUITE" "$dir/root" >"$dir/debootstrap.log" 2>&1 \
        || { tail -20 "$dir/debootstrap.log" >&2; die "debootstrap failed"; }
    # No package lists or caches in the image: apt-get update fetches them when needed.
    rm -rf "$dir/root/var/cache/apt/archives/"*.deb "$dir/root/var/lib/apt/lists/"*
    tar -C "$dir/root" -c . | podman import --quiet - "$BASE" >/dev/null
    log "made $BASE in $((SECONDS - started)) s"
}

build() {
    local tag=${1:-localhost/pbem:latest} started=$SECONDS ca extra=()
    # The certificates pip trusts on this host (a proxy that inspects TLS has its own CA):
    # mounted for the build, and named to pip by the Dockerfile's PIP_CERT argument.
    ca=${PBEM_IMAGE_CA:-${PIP_CERT:-$(python3 -m pip config get global.cert 2>/dev/null || true)}}
    if [[ -n $ca && -f $ca ]]; then
        extra+=(--volume "$ca:/run/pbem-build-ca.crt:ro" --build-arg PIP_CERT=/run/pbem-build-ca.crt)
    fi
    # --format docker keeps the HEALTHCHECK (the OCI image format has none).
    podman build --isolation chroot --format docker --build-arg "BASE=$BASE" "${extra[@]}" \
        -f "$ROOT/deploy/Dockerfile" -t "$tag" "$ROOT" >&2
    log "built $tag in $((SECONDS - started)) s"
}

case ${1:-setup} in
    setup) install_tools; make_base ;;
    build) install_tools; make_base; build "${2:-}" ;;
    run-flags) printf '%s\n' "${RUN_FLAGS[@]}" ;;
    *) die "unknown command: $1 (setup | build [TAG] | run-flags)" ;;
esac
