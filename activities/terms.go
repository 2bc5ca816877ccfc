package activities

import "github.com/bookonce/bookonce/tenants"

// TenantTerms is what a conversation and its appointments need of their
// tenant's configuration (tenants.Terms); the workflows name it here,
// where their inputs and results are defined.
type TenantTerms = tenants.Terms

// ServiceTerms are a service's label and deposit (tenants.ServiceTerms).
type ServiceTerms = tenants.ServiceTerms
