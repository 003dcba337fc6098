#!/usr/bin/env bash
# Print r2act's least-privilege RBAC (deploy/rbac.yaml) rendered for one namespace: the one
# deploy/versions.env defines, or the one given. up.sh applies this output; apply it
# yourself with:
#
#   deploy/render-rbac.sh [NAMESPACE] | kubectl --context CONTEXT apply -f -
#
# Usage: deploy/render-rbac.sh [NAMESPACE]
set -euo pipefail

deploy="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=SCRIPTDIR/versions.env
. "$deploy/versions.env"

namespace="${1:-$R2ACT_NAMESPACE}"
# A namespace name is a DNS-1123 label; checking it also keeps the substitution below from
# writing anything YAML would read as more than a name.
if ! [[ "$namespace" =~ ^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$ ]]; then
  printf 'error: %q is not a namespace name (lowercase letters, digits and "-", at most 63, starting and ending alphanumeric)\n' \
    "$namespace" >&2
  exit 2
fi

template="$(<"$deploy/rbac.yaml")"
# shellcheck disable=SC2016  # the literal placeholder, not an expansion
placeholder='${R2ACT_NAMESPACE}'
rendered="${template//"$placeholder"/$namespace}"
if [[ "$rendered" == *"\${"* ]]; then
  echo "error: deploy/rbac.yaml has a placeholder other than $placeholder" >&2
  exit 1
fi

printf '# r2act RBAC for namespace %s, rendered by deploy/render-rbac.sh from deploy/rbac.yaml\n' \
  "$namespace"
# The template's opening comment is about the template; the rest is copied as it is.
in_header=1
while IFS= read -r line; do
  if ((in_header)) && [[ -z "$line" || "$line" == \#* ]]; then
    continue
  fi
  in_header=0
  printf '%s\n' "$line"
done <<<"$rendered"
