# dupctl's image from source: docker build -t dupctl .
#   docker run --rm dupctl simulate crash
#   docker run --rm --network host -v "$PWD:/work" -w /work dupctl doctor --config dupctl.yaml
# A static binary (CGO_ENABLED=0) on distroless/static: CA certificates for
# TLS to managed Redis, PostgreSQL and RabbitMQ, no shell, user nonroot.
# Releases build the image from goreleaser's binaries (ci/docker/release.Dockerfile).
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# The commit and date `dupctl version` prints: from the linker when given,
# else from .git when the build context has it (-buildvcs=true).
ARG VERSION="" COMMIT="" DATE=""
RUN CGO_ENABLED=0 go build -trimpath -buildvcs=true -ldflags "-s -w -X github.com/dupctl/dupctl/internal/platform/buildinfo.Version=${VERSION} -X github.com/dupctl/dupctl/internal/platform/buildinfo.Commit=${COMMIT} -X github.com/dupctl/dupctl/internal/platform/buildinfo.Date=${DATE}" -o /out/dupctl ./cmd/dupctl

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/dupctl /usr/bin/dupctl
USER 65532:65532
ENTRYPOINT ["dupctl"]
