#!/bin/bash
docker run \
    --rm \
    --net=host \
    --runtime=nvidia \
    --ipc=host \
    --cap-add=SYS_PTRACE \
    --cap-add=SYS_ADMIN \
    --cap-add=DAC_READ_SEARCH \
    --security-opt seccomp=unconfined \
    -e LLM_MODELS_ROOT=/models \
    --mount type=bind,source=/home/alice,target=/home/alice \
    --mount 'type=bind,"source=/data/my,models",target=/models,readonly' \
    --workdir /home/alice/TensorRT-LLM \
    --name llama_local \
    nvcr.io/nvidia/tensorrt-llm/release:1.0.0 \
    bash -c 'python3 -c '\''import tensorrt_llm'\''
pytest -v "tests/unittest/test_x.py::test_a[tp2-it'\''s]"'
