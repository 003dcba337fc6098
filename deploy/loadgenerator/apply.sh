#!/usr/bin/env bash
# Make Online Boutique's load generator open a new connection per request (r2act_load.py):
# ship the file as the ConfigMap r2act-loadgenerator and patch the loadgenerator
# Deployment to run it (patch.yaml). Idempotent; the rollout restarts the load generator.
#
# Usage: deploy/loadgenerator/apply.sh CONTEXT NAMESPACE
set -euo pipefail

[ "$#" -eq 2 ] || {
  echo "usage: $0 CONTEXT NAMESPACE" >&2
  exit 2
}
context="$1"
namespace="$2"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

kubectl --context "$context" --namespace "$namespace" create configmap r2act-loadgenerator \
  --from-file="$here/r2act_load.py" --dry-run=client -o yaml |
  kubectl --context "$context" --namespace "$namespace" apply -f -
kubectl --context "$context" --namespace "$namespace" patch deployment loadgenerator \
  --type strategic --patch-file "$here/patch.yaml"
