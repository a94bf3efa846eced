# fish completion for locationd (CoreLocation for Linux).

# A location source URL (man 7 corelocation-sources); the same function as in whereami.fish.
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

complete -c locationd -f
complete -c locationd -l system -d 'Serve the whole machine'
complete -c locationd -l socket -r -F -d 'Listen on this socket'
complete -c locationd -l store -r -F -d 'The SQLite store'
complete -c locationd -l config -r -F -d 'The configuration file'
complete -c locationd -l source -x -d 'A location source URL' -a '(__corelocation_source_urls)'
complete -c locationd -l policy -x -d 'Answer to an undecided app without an agent' -a 'grant deny'
complete -c locationd -s f -l foreground -d 'Stay in the foreground (always)'
complete -c locationd -s h -l help -d 'Show help'
