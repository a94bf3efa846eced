import LocationFormats

/// Sources.
public enum LocationSourcesInfo {}
