package engine_test

import "os"

// Scans recycle Arrow buffers; poisoning freed ones makes a use after free
// in any engine test show up as wrong results (arrowutil.PoolAllocator).
func init() { os.Setenv("LAKESOUL_POISON_FREED", "1") }
