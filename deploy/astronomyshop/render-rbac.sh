#!/usr/bin/env bash
# Print r2act's RBAC for the Astronomy Shop's namespace: deploy/rbac.yaml (what every system
# needs, rendered by deploy/render-rbac.sh) followed by rbac-flags.yaml (the flag
# injector's two objects), both for the same namespace: the one deploy/versions.env sets as
# ASTRONOMY_SHOP_NAMESPACE, or the one given.
#
# Usage: deploy/astronomyshop/render-rbac.sh [NAMESPACE] | kubectl --context CONTEXT apply -f -
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
deploy="$(dirname "$here")"
# shellcheck source=SCRIPTDIR/../versions.env
. "$deploy/versions.env"

namespace="${1:-$ASTRONOMY_SHOP_NAMESPACE}"
# deploy/render-rbac.sh checks the name (a DNS-1123 label, exit 2 otherwise) before this
# script substitutes it anywhere.
"$deploy/render-rbac.sh" "$namespace"

template="$(<"$here/rbac-flags.yaml")"
# shellcheck disable=SC2016  # the literal placeholder, not an expansion
placeholder='${R2ACT_NAMESPACE}'
rendered="${template//"$placeholder"/$namespace}"
if [[ "$rendered" == *"\${"* ]]; then
  echo "error: deploy/astronomyshop/rbac-flags.yaml has a placeholder other than $placeholder" >&2
  exit 1
fi
printf -- '---\n# the flag injector, rendered by deploy/astronomyshop/render-rbac.sh from rbac-flags.yaml\n'
in_header=1
while IFS= read -r line; do
  if ((in_header)) && [[ -z "$line" || "$line" == \#* ]]; then
    continue
  fi
  in_header=0
  printf '%s\n' "$line"
done <<<"$rendered"
