// archive-check ARCHIVE STORE_DIR: imports an image archive with containerd's own importer (what
// `ctr images import`, hence `kind load image-archive`, runs) into a local content store, reads the
// image back for linux/amd64 (manifest, config, layers; each blob's digest checked by the store)
// and prints it as JSON; first it reads the archive as a docker-archive (manifest.json) with
// go-containerregistry and validates every digest and diff_id. Exits 1 saying why on any error.
package main

import (
	"context"
	_ "crypto/sha256"
	"encoding/json"
	"fmt"
	"os"

	"github.com/containerd/containerd/v2/core/content"
	"github.com/containerd/containerd/v2/core/images"
	"github.com/containerd/containerd/v2/core/images/archive"
	"github.com/containerd/containerd/v2/plugins/content/local"
	"github.com/containerd/platforms"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/validate"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

func main() {
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

// dockerArchive reads the archive as a docker-archive (manifest.json, what the classic
// `docker load` reads) with go-containerregistry, and validates every digest and diff_id.
func dockerArchive(archivePath string) error {
	img, err := tarball.ImageFromPath(archivePath, nil)
	if err != nil {
		return fmt.Errorf("docker-archive: %w", err)
	}
	if err := validate.Image(img); err != nil {
		return fmt.Errorf("docker-archive validate: %w", err)
	}
	return nil
}

func run(archivePath, storeDir string) error {
	ctx := context.Background()
	if err := dockerArchive(archivePath); err != nil {
		return err
	}
	store, err := local.NewStore(storeDir)
	if err != nil {
		return err
	}
	f, err := os.Open(archivePath)
	if err != nil {
		return err
	}
	defer f.Close()
	index, err := archive.ImportIndex(ctx, store, f)
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	var idx ocispec.Index
	blob, err := content.ReadBlob(ctx, store, index)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(blob, &idx); err != nil {
		return err
	}
	out := map[string]any{"index": idx}
	var imgs []map[string]any
	for _, desc := range idx.Manifests {
		name := desc.Annotations[images.AnnotationImageName]
		manifest, err := images.Manifest(ctx, store, desc, platforms.Only(platforms.MustParse("linux/amd64")))
		if err != nil {
			return fmt.Errorf("manifest of %s: %w", name, err)
		}
		diffIDs, err := images.RootFS(ctx, store, manifest.Config)
		if err != nil {
			return fmt.Errorf("rootfs of %s: %w", name, err)
		}
		for _, layer := range manifest.Layers {
			if _, err := store.Info(ctx, layer.Digest); err != nil {
				return fmt.Errorf("layer %s: %w", layer.Digest, err)
			}
		}
		imgs = append(imgs, map[string]any{"name": name, "manifest": manifest, "diff_ids": diffIDs})
	}
	out["images"] = imgs
	return json.NewEncoder(os.Stdout).Encode(out)
}
