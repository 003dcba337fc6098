#!/usr/bin/env bash
# Delete the kind cluster made by up.sh, and with it everything r2act installed there.
#
# Usage: deploy/kind/down.sh [CLUSTER_NAME [UP_SCRIPT]]
#        (deploy/kind/lanes/down.sh passes the lanes cluster and its own up.sh)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=SCRIPTDIR/../versions.env
. "$(dirname "$here")/versions.env"
cluster_name="${1:-$KIND_CLUSTER_NAME}"
up_script="${2:-deploy/kind/up.sh}"

command -v kind >/dev/null 2>&1 || {
  echo "error: kind is required (https://kind.sigs.k8s.io/)" >&2
  exit 1
}

# A failing `kind get clusters` (Docker stopped) must not read as "no cluster".
if ! clusters="$(kind get clusters 2>&1)"; then
  printf 'error: kind cannot list clusters (is Docker running?): %s\n' "$clusters" >&2
  exit 1
fi
if ! grep -qx "$cluster_name" <<<"$clusters"; then
  echo "no kind cluster named ${cluster_name}; nothing to do"
  exit 0
fi

echo "[1/1] deleting kind cluster ${cluster_name} (Online Boutique, Chaos Mesh, Prometheus)"
kind delete cluster --name "$cluster_name"
echo "done; recreate it with: ${up_script}"
