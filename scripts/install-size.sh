#!/usr/bin/env bash
# What `npm i <package>` costs a user: packs one workspace package (default packages/core) as it is published,
# installs the tarball with its dependencies from the npm registry into a fresh folder outside the workspace,
# and prints the size of node_modules and the number of packages in it. Not part of CI (needs the registry).
#
#   scripts/install-size.sh [packages/<name>]     (build first: npx -y pnpm@10.34.9 run build)
# Only for a package whose @tiffin/* dependencies are on the registry (today: @tiffin/core, which has none).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
PKG=${1:-packages/core}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/tiffin-install-size-XXXXXX")
trap 'rm -rf "$WORK"' EXIT

mkdir "$WORK/pack" "$WORK/app"
(cd "$ROOT/$PKG" && npx -y pnpm@10.34.9 pack --pack-destination "$WORK/pack" >/dev/null)
cd "$WORK/app"
echo '{ "name": "install-size", "private": true }' >package.json
npm install --ignore-scripts --no-audit --no-fund "$WORK"/pack/*.tgz >/dev/null
packages=$(npm ls --all --parseable | tail -n +2 | sort -u | wc -l)
echo "$(node -p "require('$ROOT/$PKG/package.json').name"): node_modules $(du -sh node_modules | cut -f1)" \
  "($(du -s --block-size=1 node_modules | cut -f1) bytes), $packages packages"
