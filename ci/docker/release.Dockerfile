# The release image (goreleaser.yaml dockers_v2): the binary goreleaser built
# for the target platform (static, CGO_ENABLED=0, the commit set by ldflags)
# on distroless/static, as user nonroot. The Dockerfile at the root builds
# the same image from source.
FROM gcr.io/distroless/static-debian12:nonroot
ARG TARGETPLATFORM
COPY ${TARGETPLATFORM}/dupctl /usr/bin/dupctl
USER 65532:65532
ENTRYPOINT ["dupctl"]
