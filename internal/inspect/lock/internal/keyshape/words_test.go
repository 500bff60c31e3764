package keyshape

import "testing"

func TestNameWords(t *testing.T) {
	for key, want := range map[string][2]bool{
		"lock:payment:order:42":   {true, false},
		"myLock":                  {true, false},
		"HTTPLock":                {true, false},
		"job-lock:default:x":      {true, false},
		"distributed_mutex:a":     {true, false},
		"leases:node-1":           {true, false},
		"clock:offset_ms":         {false, true}, // "offset"
		"deadlock_count":          {false, true}, // "count"
		"user:42:blockedBy":       {false, false},
		"account:7:locked":        {false, false}, // a state, not a lock
		"stats:lock_wait_ms":      {true, true},
		"session:abc":             {false, true},
		"cache:lock_screen":       {true, true},
		"orders:42":               {false, false},
		"redisson_lock_token:{x}": {true, true},
	} {
		l, o := NameWords(key)
		if [2]bool{l, o} != want {
			t.Errorf("NameWords(%q) = lock %v, other %v; want %v", key, l, o, want)
		}
	}
}
