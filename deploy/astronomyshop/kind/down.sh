#!/usr/bin/env bash
# Delete the Astronomy Shop's kind cluster (made by up.sh) and everything in it.
#
# Usage: deploy/astronomyshop/kind/down.sh
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
deploy="$(dirname "$(dirname "$here")")"
# shellcheck source=SCRIPTDIR/../../versions.env
. "$deploy/versions.env"

exec "$deploy/kind/down.sh" "$ASTRONOMY_SHOP_KIND_CLUSTER_NAME" deploy/astronomyshop/kind/up.sh
