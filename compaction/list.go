package compaction

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/lakesoul-go/lakesoul/objstore"
)

// objectInfo is a stored object: its full URI and last modification.
type objectInfo struct {
	Path    string
	Size    int64
	ModTime time.Time
}

// errNoListing: the store cannot list objects (orphan collection skips it).
var errNoListing = errors.New("compaction: the object store cannot list objects")

// listObjects lists every object below the directory-like URI root, for
// local disk and S3 (objstore.Store has no listing of its own).
func listObjects(ctx context.Context, store objstore.Store, root string) ([]objectInfo, error) {
	switch st := store.(type) {
	case objstore.Local, *objstore.Local:
		return listLocal(root)
	case *objstore.S3:
		return listS3(ctx, st, root)
	}
	return nil, errNoListing
}

func listLocal(root string) ([]objectInfo, error) {
	dir, err := objstore.LocalPath(root)
	if err != nil {
		return nil, err
	}
	var out []objectInfo
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		out = append(out, objectInfo{Path: objstore.Join(root, filepath.ToSlash(rel)), Size: info.Size(), ModTime: info.ModTime()})
		return nil
	})
	return out, err
}

func listS3(ctx context.Context, st *objstore.S3, root string) ([]objectInfo, error) {
	bucket, key, err := objstore.ParseS3URI(root)
	if err != nil {
		return nil, err
	}
	prefix := strings.TrimSuffix(key, "/") + "/"
	base := strings.TrimSuffix(root, "/") + "/"
	var out []objectInfo
	var token *string
	for {
		res, err := st.Client().ListObjectsV2(ctx, &s3.ListObjectsV2Input{
			Bucket: aws.String(bucket), Prefix: aws.String(prefix), ContinuationToken: token})
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", root, err)
		}
		for _, o := range res.Contents {
			k := aws.ToString(o.Key)
			out = append(out, objectInfo{Path: base + strings.TrimPrefix(k, prefix), Size: aws.ToInt64(o.Size),
				ModTime: aws.ToTime(o.LastModified)})
		}
		if !aws.ToBool(res.IsTruncated) || res.NextContinuationToken == nil {
			return out, nil
		}
		token = res.NextContinuationToken
	}
}
