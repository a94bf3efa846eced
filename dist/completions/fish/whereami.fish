# fish completion for whereami (CoreLocation for Linux).

# A location source URL (man 7 corelocation-sources): the schemes, then the path of a file or
# device after the schemes that take one.
function __corelocation_source_urls
    set -l word (commandline -ct)
    set word (string replace -r -- '^--source=' '' $word)
    if string match -qr -- '^(replay|file|static|nmea)://' $word
        set -l scheme (string match -r -- '^[a-z+]+://' $word)
        set -l path (string replace -- $scheme '' $word)
        test -z "$path"; and set path /
        for candidate in (__fish_complete_path $path)
            echo $scheme$candidate
        end
    else
        printf '%s\t%s\n' replay:// 'a recorded GPX track or NMEA log' \
            static:// 'a fixed position file' gpsd://127.0.0.1:2947 'gpsd over TCP' \
            gpsd:///run/gpsd.sock 'gpsd on its Unix socket' nmea:// 'an NMEA 0183 serial device' \
            nmea+tcp:// 'NMEA 0183 from a TCP server' file:// 'the same as replay://' \
            geoclue 'GeoClue2 on the system bus' iio-compass 'the compass of iio-sensor-proxy'
    end
end

complete -c whereami -f
complete -c whereami -s w -l watch -d 'Keep printing location updates'
complete -c whereami -s f -l format -x -d 'Print FORMAT with its tokens replaced' -a '%latitude %longitude %altitude %direction %speed %h_accuracy %v_accuracy %time %course_accuracy %speed_accuracy %floor %simulated %address %name %isoCountryCode %country %postalCode %administrativeArea %subAdministrativeArea %locality %subLocality %thoroughfare %subThoroughfare %ocean %inlandWater %region %timeZone %time_local'
complete -c whereami -s j -l json -d 'Print one JSON object per line'
complete -c whereami -s v -l verbose -d 'Show diagnostics on standard error'
complete -c whereami -l source -x -d 'Location source URL' -a '(__corelocation_source_urls)'
complete -c whereami -l accuracy -x -d 'Accuracy wanted' -a 'best navigation 10m 100m 1km 3km'
complete -c whereami -l distance-filter -x -d 'Only report moves of at least M metres'
complete -c whereami -l timeout -x -d 'Give up after S seconds without a location'
complete -c whereami -l speed -x -d 'Replay X times faster than recorded'
complete -c whereami -l instant -d 'Replay as fast as possible'
complete -c whereami -l count -x -d 'Stop after N locations'
complete -c whereami -l record -r -F -d 'Also write the locations printed as a GPX track'
complete -c whereami -l regions -r -F -d 'Monitor the circles of a GeoJSON file'
complete -c whereami -l geocode -x -d 'Print the places that match TEXT'
complete -c whereami -l beacons -x -d 'Range the iBeacons of a proximity UUID'
complete -c whereami -l version -d 'Print the version'
complete -c whereami -s h -l help -d 'Show help'
