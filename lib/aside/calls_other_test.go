//go:build !(linux && amd64)

package aside

func askedStuck()    {}
func askedMemLimit() {}
