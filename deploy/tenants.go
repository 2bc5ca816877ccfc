package deploy

import _ "embed"

// DemoTenants is tenants.demo.yaml: the demo tenant (bays bay-1 and bay-2,
// technician tech-anna; tire-change, inspection, oil-change; a 20 EUR
// deposit; Europe/Berlin, German; the token dev-token and the number
// +4930123456). Every fresh development or test database gets it through
// tenants.Apply; migrations no longer seed it.
//
//go:embed tenants.demo.yaml
var DemoTenants []byte
