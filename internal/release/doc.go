// Package release holds the tests of how dupctl reaches its users: the
// GitHub Action (action.yml) and the GitLab template run for real with a
// CI's environment faked, the goreleaser configuration (packages, image,
// ldflags) held against the code it names, the container image's
// Dockerfile, and docs/ci.md's example dupctl.yaml run against the local
// services. It has no code of its own.
package release
