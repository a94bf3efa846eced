// Stands in for the LocationServices types that HubClient.swift names (in the `HubClient`
// protocol) but the daemon protocol never uses, so that HubClient.swift (AuthorizationSnapshot)
// compiles into the fuzz binary without the rest of LocationServices. Built by run.sh only.

/// Placeholder for `LocationServices.LocationHub`.
public final class LocationHub: Sendable {}

/// Placeholder for `LocationServices.LocationService`.
public protocol LocationService: AnyObject, Sendable {}
