#!/usr/bin/env bash
# serve-quickstart.sh: serves the quickstart text classifier over HTTP (docs/serving.md) — builds, trains the
# model into runs/quickstart when it has none, then runs `ethost --mode serve` on 127.0.0.1:8000 until Ctrl-C.
#   scripts/serve-quickstart.sh [--set serve.port=8001 ...]    then: curl -s localhost:8000/predict -d '{"rows": [{"text": "物流很快"}]}'
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh dev
if [ ! -f runs/quickstart/model.safetensors ]; then
  ./build/bin/ethost --app text_classify --config configs/text_classify/quickstart.toml --log-level warn
fi
exec ./build/bin/ethost --app text_classify --mode serve --config configs/text_classify/serve.toml "$@"
