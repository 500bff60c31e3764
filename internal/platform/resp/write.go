package resp

import "strconv"

// AppendCommand appends a command as an array of bulk strings.
func AppendCommand[S ~string | ~[]byte](b []byte, args ...S) []byte {
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(len(args)), 10)
	b = append(b, '\r', '\n')
	for _, a := range args {
		b = AppendBulk(b, a)
	}
	return b
}

// AppendBulk appends s as a bulk string.
func AppendBulk[S ~string | ~[]byte](b []byte, s S) []byte {
	b = append(b, '$')
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, '\r', '\n')
	b = append(b, s...)
	return append(b, '\r', '\n')
}
