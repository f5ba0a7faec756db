module volcano-py/archive-check

go 1.24.0

require (
	github.com/containerd/containerd/v2 v2.1.4
	github.com/containerd/platforms v1.0.0-rc.1
	github.com/google/go-containerregistry v0.20.6
	github.com/opencontainers/image-spec v1.1.1
)

require (
	github.com/containerd/errdefs v1.0.0 // indirect
	github.com/containerd/log v0.1.0 // indirect
	github.com/containerd/stargz-snapshotter/estargz v0.16.3 // indirect
	github.com/distribution/reference v0.6.0 // indirect
	github.com/google/go-cmp v0.7.0 // indirect
	github.com/klauspost/compress v1.18.0 // indirect
	github.com/opencontainers/go-digest v1.0.0 // indirect
	github.com/sirupsen/logrus v1.9.3 // indirect
	github.com/vbatts/tar-split v0.12.1 // indirect
	golang.org/x/sync v0.15.0 // indirect
	golang.org/x/sys v0.33.0 // indirect
)
