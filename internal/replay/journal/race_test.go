//go:build race

package journal

const modelSeeds = 400 // the race detector slows the model tenfold
