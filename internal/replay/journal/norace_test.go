//go:build !race

package journal

const modelSeeds = 2000
