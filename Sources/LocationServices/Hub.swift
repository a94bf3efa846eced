import LocationEngine
import LocationSources
import LocationStore

/// Services.
public enum LocationServicesInfo {}
