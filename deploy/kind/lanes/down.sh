#!/usr/bin/env bash
# Delete the lanes cluster made by up.sh.
#
# Usage: deploy/kind/lanes/down.sh
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=SCRIPTDIR/../../versions.env
. "$(dirname "$(dirname "$here")")/versions.env"

cluster_name="${KIND_CLUSTER_NAME}-lanes"
command -v kind >/dev/null 2>&1 || {
  echo "error: kind is required (https://kind.sigs.k8s.io/)" >&2
  exit 1
}
if ! clusters="$(kind get clusters 2>&1)"; then
  printf 'error: kind cannot list clusters (is Docker running?): %s\n' "$clusters" >&2
  exit 1
fi
if ! grep -qx "$cluster_name" <<<"$clusters"; then
  echo "no kind cluster named ${cluster_name}; nothing to do"
  exit 0
fi
kind delete cluster --name "$cluster_name"
echo "done; recreate it with: deploy/kind/lanes/up.sh"
