# The aiperf toolkit's six binaries in a small image: static (no cgo), run as a non-root user,
# no shell. Built by `make image` where a Docker engine runs (not tested here: the machine that
# builds this repository has only the client). The Kubernetes manifests in deploy/k8s use it.
#
#   docker build -t aiperf-toolkit:$(git describe --always) .
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 make build VERSION=$VERSION

# distroless static: CA certificates, /etc/passwd with nonroot (65532), tzdata; nothing else.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /src/bin/ /usr/local/bin/
USER 65532:65532
WORKDIR /home/nonroot
ENV AIPERF_CACHE_DIR=/home/nonroot/.cache/aiperf
ENTRYPOINT []
CMD ["aiperf-replay", "--help"]
