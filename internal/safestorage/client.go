package safestorage

import (
	"context"

	"go.opentelemetry.io/collector/extension/xextension/storage"
)

// safeClient turns panics of the storage library (bbolt panics on some
// damaged pages) into errors, so that a read or write of a damaged store
// fails like any other instead of taking the Collector down.
type safeClient struct{ c storage.Client }

func (s *safeClient) Get(ctx context.Context, key string) (v []byte, err error) {
	defer recoverAs(&err)
	return s.c.Get(ctx, key)
}

func (s *safeClient) Set(ctx context.Context, key string, value []byte) (err error) {
	defer recoverAs(&err)
	return s.c.Set(ctx, key, value)
}

func (s *safeClient) Delete(ctx context.Context, key string) (err error) {
	defer recoverAs(&err)
	return s.c.Delete(ctx, key)
}

func (s *safeClient) Batch(ctx context.Context, ops ...*storage.Operation) (err error) {
	defer recoverAs(&err)
	return s.c.Batch(ctx, ops...)
}

func (s *safeClient) Close(ctx context.Context) (err error) {
	defer recoverAs(&err)
	return s.c.Close(ctx)
}
