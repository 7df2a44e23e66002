#!/usr/bin/env bash
# Containerize examples/quickstart end to end on a machine that cannot pull base images (not part of CI).
#
#   1. makes a local base image: a Debian minbase (debootstrap) plus this machine's Node and npm;
#   2. builds a package of examples/quickstart (`tiffin build`);
#   3. containerizes it with podman (`tiffin containerize --backend podman`, chroot isolation);
#   4. runs the image with runc and calls the /classify API inside the container.
#
# Needs root and: apt-get install podman buildah debootstrap runc
# (--no-healthcheck on run: podman drives health checks with systemd timers, absent here; the image keeps its HEALTHCHECK.)
# Environment: WORK (scratch folder, default /tmp/tiffin-containerize), DEBIAN_MIRROR (default: the first
# URIs entry of this machine's apt sources), TIFFIN_HOME (default $WORK/home).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=${WORK:-/tmp/tiffin-containerize}
export TIFFIN_HOME=${TIFFIN_HOME:-$WORK/home}
BASE_IMAGE=localhost/tiffin-node-base:bookworm
IMAGE=localhost/quickstart:latest
RUN_FLAGS=(--runtime runc --no-healthcheck --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 --network none --rm)

for tool in podman debootstrap runc node; do
  command -v "$tool" >/dev/null || { echo "missing $tool: apt-get install podman buildah debootstrap runc" >&2; exit 1; }
done
mkdir -p "$WORK"

# vfs storage in the scratch folder: works without overlay support.
cat >"$WORK/storage.conf" <<CONF
[storage]
driver = "vfs"
runroot = "$WORK/storage/run"
graphroot = "$WORK/storage/graph"
CONF
export CONTAINERS_STORAGE_CONF="$WORK/storage.conf"

tiffin() { (cd "$ROOT" && node --conditions=source --import tsx packages/cli/src/bin.ts "$@"); }
step() { printf '\n== %s\n' "$*"; }

if ! podman image exists "$BASE_IMAGE"; then
  step "base image $BASE_IMAGE (debootstrap minbase + host Node $(node --version))"
  mirror=${DEBIAN_MIRROR:-$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)}
  start=$SECONDS
  if [ ! -x "$WORK/rootfs/usr/bin/apt-get" ]; then
    rm -rf "$WORK/rootfs"
    debootstrap --variant=minbase bookworm "$WORK/rootfs" ${mirror:+"$mirror"} >"$WORK/debootstrap.log" 2>&1
  fi
  node_prefix=$(dirname "$(dirname "$(readlink -f "$(command -v node)")")")
  cp "$node_prefix/bin/node" "$WORK/rootfs/usr/local/bin/node"
  mkdir -p "$WORK/rootfs/usr/local/lib/node_modules"
  cp -r "$node_prefix/lib/node_modules/npm" "$WORK/rootfs/usr/local/lib/node_modules/npm"
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$WORK/rootfs/usr/local/bin/npm"
  # The CA bundle this machine's Node trusts (NODE_EXTRA_CA_CERTS), so `npm ci` in the image build
  # reaches the npm registry through the same TLS setup as the host.
  ca=${NODE_EXTRA_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}
  mkdir -p "$WORK/rootfs/etc/ssl/certs"
  [ -f "$ca" ] && cp "$ca" "$WORK/rootfs/etc/ssl/certs/tiffin-build-ca.crt"
  tar -C "$WORK/rootfs" -c . | podman import --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/tiffin-build-ca.crt' - "$BASE_IMAGE" >/dev/null
  echo "base image ready in $((SECONDS - start)) s"
fi

step "tiffin build examples/quickstart/service.ts"
start=$SECONDS
tiffin build examples/quickstart/service.ts
echo "built in $((SECONDS - start)) s"

step "tiffin containerize quickstart:latest --backend podman"
start=$SECONDS
tiffin containerize quickstart:latest --backend podman --base-image "$BASE_IMAGE" --image-tag "$IMAGE" \
  --backend-arg=--isolation=chroot
echo "containerized in $((SECONDS - start)) s"
podman image ls "$IMAGE"
podman image inspect "$IMAGE" --format 'user={{.Config.User}} ports={{json .Config.ExposedPorts}} healthcheck={{json .Config.Healthcheck.Test}}'

step "podman run (runc): start the server and call /classify and /readyz inside the container"
podman run "${RUN_FLAGS[@]}" "$IMAGE" sh -c '
  node server.mjs >/tmp/server.log 2>&1 &
  for i in $(seq 1 50); do node -e "fetch(\"http://127.0.0.1:3000/readyz\").then(r=>process.exit(r.ok?0:1),()=>process.exit(1))" && break; sleep 0.2; done
  echo "id: $(id -u):$(id -g)"
  node -e "
    const post = (p, b) => fetch(\"http://127.0.0.1:3000\" + p, { method: \"POST\", headers: { \"content-type\": \"application/json\" }, body: b });
    (async () => {
      const r = await post(\"/classify\", \"[[5.1,3.5,1.4,0.2],[6.7,3.0,5.2,2.3]]\");
      console.log(\"POST /classify ->\", r.status, await r.text());
      const h = await fetch(\"http://127.0.0.1:3000/readyz\");
      console.log(\"GET /readyz ->\", h.status);
    })();
  "
'
