package upstream

import "github.com/mcpdrift/mcpdrift/proxy/internal/config"

// OAuthStoreFile is the file the store keeps upstream's token in (for the
// proxy module's tests).
func OAuthStoreFile(o *config.OAuth, upstream string) string {
	return (&oauthTransport{cfg: o, upstream: upstream}).storeFile()
}
