package pgcatalog

import (
	"testing"

	"github.com/lakesoul-go/lakesoul/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }
