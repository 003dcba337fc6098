#!/usr/bin/env bash
# Delete the lanes cluster made by up.sh (deploy/kind/down.sh does the work).
#
# Usage: deploy/kind/lanes/down.sh
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=SCRIPTDIR/../../versions.env
. "$(dirname "$(dirname "$here")")/versions.env"

exec "$(dirname "$here")/down.sh" "${KIND_CLUSTER_NAME}-lanes" deploy/kind/lanes/up.sh
