<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="de_DE">
<context>
    <name>Banner</name>
    <message>
        <source>Dismiss</source>
        <translation>Schließen</translation>
    </message>
</context>
<context>
    <name>CataloguePage</name>
    <message>
        <source>As stored</source>
        <translation>Wie gespeichert</translation>
    </message>
    <message>
        <source>Catalogue</source>
        <translation>Katalog</translation>
    </message>
    <message>
        <source>The released Gemma 3 models, the memory their weights take, and whether they fit this computer&apos;s %1.</source>
        <translation>Die veröffentlichten Gemma-3-Modelle, der Speicher ihrer Gewichte und ob sie in die %1 dieses Computers passen.</translation>
    </message>
    <message>
        <source>The released Gemma 3 models and the memory their weights take.</source>
        <translation>Die veröffentlichten Gemma-3-Modelle und der Speicher ihrer Gewichte.</translation>
    </message>
    <message>
        <source>Try again</source>
        <translation>Erneut versuchen</translation>
    </message>
    <message>
        <source>%1: %2, fits</source>
        <translation>%1: %2, passt</translation>
    </message>
    <message>
        <source>%1: %2, too big</source>
        <translation>%1: %2, zu groß</translation>
    </message>
    <message>
        <source>Download: %1</source>
        <translation>Download: %1</translation>
    </message>
    <message>
        <source>Download: about %1</source>
        <translation>Download: etwa %1</translation>
    </message>
    <message>
        <source>Show files…</source>
        <translation>Dateien zeigen …</translation>
    </message>
</context>
<context>
    <name>ChatPage</name>
    <message>
        <source>Delete this conversation?</source>
        <translation>Diese Unterhaltung löschen?</translation>
    </message>
    <message>
        <source>“%1” will be removed from this computer.</source>
        <translation>„%1“ wird von diesem Computer entfernt.</translation>
    </message>
    <message>
        <source>New chat</source>
        <translation>Neuer Chat</translation>
    </message>
</context>
<context>
    <name>ChatPane</name>
    <message>
        <source>New chat</source>
        <translation>Neuer Chat</translation>
    </message>
    <message>
        <source>System prompt</source>
        <translation>Systemprompt</translation>
    </message>
    <message>
        <source>Some conversations could not be read and were left as they are:</source>
        <translation>Einige Unterhaltungen konnten nicht gelesen werden und bleiben unverändert liegen:</translation>
    </message>
    <message>
        <source>Open Models</source>
        <translation>Modelle öffnen</translation>
    </message>
    <message>
        <source>The model could not be loaded: %1</source>
        <translation>Das Modell konnte nicht geladen werden: %1</translation>
    </message>
    <message>
        <source>Ask Gemma anything</source>
        <translation>Fragen Sie Gemma, was Sie wollen</translation>
    </message>
    <message>
        <source>Loading the model…</source>
        <translation>Das Modell wird geladen …</translation>
    </message>
    <message>
        <source>No model loaded</source>
        <translation>Kein Modell geladen</translation>
    </message>
    <message>
        <source>Everything runs on this computer. Ctrl+Enter sends, Esc stops the answer.</source>
        <translation>Alles läuft auf diesem Computer. Strg+Eingabe sendet, Esc hält die Antwort an.</translation>
    </message>
    <message>
        <source>Open a Gemma 3 model to start chatting.</source>
        <translation>Öffnen Sie ein Gemma-3-Modell, um zu chatten.</translation>
    </message>
    <message>
        <source>Export the conversation as JSON</source>
        <translation>Unterhaltung als JSON exportieren</translation>
    </message>
    <message>
        <source>Export the conversation as Markdown</source>
        <translation>Unterhaltung als Markdown exportieren</translation>
    </message>
    <message>
        <source>Save</source>
        <translation>Speichern</translation>
    </message>
    <message>
        <source>Kiln conversation (*.json)</source>
        <translation>Kiln-Unterhaltung (*.json)</translation>
    </message>
    <message>
        <source>Markdown (*.md)</source>
        <translation>Markdown (*.md)</translation>
    </message>
    <message>
        <source>Import a conversation</source>
        <translation>Unterhaltung importieren</translation>
    </message>
    <message>
        <source>Import</source>
        <translation>Importieren</translation>
    </message>
    <message>
        <source>Export or import</source>
        <translation>Exportieren oder importieren</translation>
    </message>
    <message>
        <source>Export as Markdown…</source>
        <translation>Als Markdown exportieren …</translation>
    </message>
    <message>
        <source>Export as JSON…</source>
        <translation>Als JSON exportieren …</translation>
    </message>
    <message>
        <source>Import a conversation…</source>
        <translation>Unterhaltung importieren …</translation>
    </message>
    <message>
        <source>Everything runs on this computer. Enter sends, Shift+Enter starts a new line, Esc stops the answer.</source>
        <translation>Alles läuft auf diesem Computer. Eingabe sendet, Umschalt+Eingabe beginnt eine neue Zeile, Esc hält die Antwort an.</translation>
    </message>
    <message>
        <source>Attach images</source>
        <translation>Bilder anhängen</translation>
    </message>
    <message>
        <source>Attach</source>
        <translation>Anhängen</translation>
    </message>
    <message>
        <source>Images (*.png *.jpg *.jpeg *.webp)</source>
        <translation>Bilder (*.png *.jpg *.jpeg *.webp)</translation>
    </message>
    <message>
        <source>Load a model that can see images to attach one.</source>
        <translation>Laden Sie ein Modell, das Bilder sehen kann, um eines anzuhängen.</translation>
    </message>
    <message>
        <source>Wait for the answer to finish.</source>
        <translation>Warten Sie, bis die Antwort fertig ist.</translation>
    </message>
    <message>
        <source>This model cannot see images: it has no vision tower (a GGUF model needs its mmproj file beside it).</source>
        <translation>Dieses Modell kann keine Bilder sehen: Es hat keinen Vision-Encoder (ein GGUF-Modell braucht seine mmproj-Datei daneben).</translation>
    </message>
</context>
<context>
    <name>CodeBlock</name>
    <message>
        <source>code</source>
        <translation>Code</translation>
    </message>
    <message>
        <source>Copied</source>
        <translation>Kopiert</translation>
    </message>
    <message>
        <source>Copy code</source>
        <translation>Code kopieren</translation>
    </message>
</context>
<context>
    <name>Composer</name>
    <message>
        <source>Message Gemma… (Ctrl+Enter to send)</source>
        <translation>Nachricht an Gemma … (Strg+Eingabe sendet)</translation>
    </message>
    <message>
        <source>Load a model to start chatting</source>
        <translation>Laden Sie ein Modell, um zu chatten</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>Anhalten</translation>
    </message>
    <message>
        <source>Send</source>
        <translation>Senden</translation>
    </message>
    <message>
        <source>Stop (Esc)</source>
        <translation>Anhalten (Esc)</translation>
    </message>
    <message>
        <source>Send (Ctrl+Enter)</source>
        <translation>Senden (Strg+Eingabe)</translation>
    </message>
    <message>
        <source>Message Gemma… (Enter to send, Shift+Enter for a new line)</source>
        <translation>Nachricht an Gemma … (Eingabe sendet, Umschalt+Eingabe für eine neue Zeile)</translation>
    </message>
    <message>
        <source>Send (Enter)</source>
        <translation>Senden (Eingabe)</translation>
    </message>
    <message>
        <source>Attach images (or drop them here)</source>
        <translation>Bilder anhängen (oder hierher ziehen)</translation>
    </message>
    <message>
        <source>Remove this image</source>
        <translation>Dieses Bild entfernen</translation>
    </message>
    <message>
        <source>Attach images</source>
        <translation>Bilder anhängen</translation>
    </message>
</context>
<context>
    <name>ConversationExport</name>
    <message>
        <source>New chat</source>
        <translation>Neuer Chat</translation>
    </message>
    <message>
        <source>System prompt</source>
        <translation>Systemprompt</translation>
    </message>
    <message>
        <source>You</source>
        <translation>Du</translation>
    </message>
    <message>
        <source>Gemma</source>
        <translation>Gemma</translation>
    </message>
    <message>
        <source>The answer failed: %1</source>
        <translation>Die Antwort ist fehlgeschlagen: %1</translation>
    </message>
    <message>
        <source>Conversation</source>
        <translation>Unterhaltung</translation>
    </message>
    <message>
        <source>%1: cannot be written (%2)</source>
        <translation>%1: kann nicht geschrieben werden (%2)</translation>
    </message>
    <message>
        <source>%1: larger than %2 MiB, not read</source>
        <translation>%1: größer als %2 MiB, nicht gelesen</translation>
    </message>
    <message>
        <source>%1: cannot be read (%2)</source>
        <translation>%1: kann nicht gelesen werden (%2)</translation>
    </message>
    <message>
        <source>%1: not a conversation Kiln exported (not JSON)</source>
        <translation>%1: keine von Kiln exportierte Unterhaltung (kein JSON)</translation>
    </message>
    <message>
        <source>[Image: %1]</source>
        <translation>[Bild: %1]</translation>
    </message>
</context>
<context>
    <name>ConversationItem</name>
    <message>
        <source>New chat</source>
        <translation>Neuer Chat</translation>
    </message>
    <message>
        <source>No messages yet</source>
        <translation>Noch keine Nachrichten</translation>
    </message>
    <message>
        <source>More</source>
        <translation>Mehr</translation>
    </message>
    <message>
        <source>Rename</source>
        <translation>Umbenennen</translation>
    </message>
    <message>
        <source>Delete</source>
        <translation>Löschen</translation>
    </message>
</context>
<context>
    <name>ConversationSidebar</name>
    <message>
        <source>New chat</source>
        <translation>Neuer Chat</translation>
    </message>
    <message>
        <source>Ctrl+N</source>
        <translation>Strg+N</translation>
    </message>
    <message>
        <source>Search conversations</source>
        <translation>Unterhaltungen durchsuchen</translation>
    </message>
    <message>
        <source>No conversation matches</source>
        <translation>Keine passende Unterhaltung</translation>
    </message>
    <message>
        <source>Ctrl+F</source>
        <translation>Strg+F</translation>
    </message>
</context>
<context>
    <name>ConversationStore</name>
    <message>
        <source>not a Kiln conversation (no &quot;format&quot;: &quot;kiln-conversation&quot;)</source>
        <translation>keine Kiln-Unterhaltung (kein &quot;format&quot;: &quot;kiln-conversation&quot;)</translation>
    </message>
    <message>
        <source>written by a newer Kiln (format version %1)</source>
        <translation>von einem neueren Kiln geschrieben (Formatversion %1)</translation>
    </message>
    <message>
        <source>has no &quot;messages&quot; list</source>
        <translation>hat keine &quot;messages&quot;-Liste</translation>
    </message>
    <message>
        <source>message %1 has an unknown role &quot;%2&quot;</source>
        <translation>Nachricht %1 hat eine unbekannte Rolle &quot;%2&quot;</translation>
    </message>
    <message>
        <source>message %1 has no text</source>
        <translation>Nachricht %1 hat keinen Text</translation>
    </message>
    <message>
        <source>%1 at byte %2</source>
        <translation>%1 bei Byte %2</translation>
    </message>
    <message>
        <source>not a JSON object</source>
        <translation>kein JSON-Objekt</translation>
    </message>
    <message>
        <source>%1: cannot create the folder</source>
        <translation>%1: der Ordner kann nicht angelegt werden</translation>
    </message>
    <message>
        <source>%1: cannot be written (%2)</source>
        <translation>%1: kann nicht geschrieben werden (%2)</translation>
    </message>
    <message>
        <source>%1: cannot be deleted (%2)</source>
        <translation>%1: kann nicht gelöscht werden (%2)</translation>
    </message>
    <message>
        <source>larger than %1 MiB, not read</source>
        <translation>größer als %1 MiB, nicht gelesen</translation>
    </message>
    <message>
        <source>cannot be read (%1)</source>
        <translation>kann nicht gelesen werden (%1)</translation>
    </message>
    <message>
        <source>not valid JSON (%1)</source>
        <translation>kein gültiges JSON (%1)</translation>
    </message>
    <message>
        <source>%1: %2; moved aside to %3</source>
        <translation>%1: %2; beiseitegelegt als %3</translation>
    </message>
    <message>
        <source>%1 (version %2)</source>
        <translation>%1 (Version %2)</translation>
    </message>
    <message>
        <source>message %1 has a version %2 that does not start with its role</source>
        <translation>Nachricht %1 hat eine Version %2, die nicht mit ihrer Rolle beginnt</translation>
    </message>
    <message>
        <source>message %1 has an image with a bad file name &quot;%2&quot;</source>
        <translation>Nachricht %1 hat ein Bild mit ungültigem Dateinamen „%2“</translation>
    </message>
</context>
<context>
    <name>DownloadsPage</name>
    <message>
        <source>Downloads</source>
        <translation>Downloads</translation>
    </message>
    <message>
        <source>Get a Gemma 3 model from Hugging Face — a model folder or a .gguf file.</source>
        <translation>Ein Gemma-3-Modell von Hugging Face holen – einen Modellordner oder eine .gguf-Datei.</translation>
    </message>
    <message>
        <source>Repository</source>
        <translation>Repository</translation>
    </message>
    <message>
        <source>OWNER/REPO as on huggingface.co, e.g. ggml-org/gemma-3-1b-it-GGUF.</source>
        <translation>OWNER/REPO wie auf huggingface.co, z. B. ggml-org/gemma-3-1b-it-GGUF.</translation>
    </message>
    <message>
        <source>Listing…</source>
        <translation>Wird aufgelistet …</translation>
    </message>
    <message>
        <source>List files</source>
        <translation>Dateien auflisten</translation>
    </message>
    <message>
        <source>Gated models (Google&apos;s Gemma among them) need a Hugging Face token: Settings → Downloads.</source>
        <translation>Zugangsbeschränkte Modelle (darunter Googles Gemma) brauchen ein Hugging-Face-Token: Einstellungen → Downloads.</translation>
    </message>
    <message>
        <source>This build of Kiln has no downloader.</source>
        <translation>Dieser Build von Kiln kann nichts herunterladen.</translation>
    </message>
    <message>
        <source>Downloaded into %1. The model is in the Models page&apos;s library.</source>
        <translation>Heruntergeladen nach %1. Das Modell steht in der Bibliothek der Seite „Modelle“.</translation>
    </message>
    <message>
        <source>Open Models</source>
        <translation>Modelle öffnen</translation>
    </message>
    <message numerus="yes">
        <source>%n file(s), saved to %1</source>
        <translation>
            <numerusform>%n Datei, gespeichert in %1</numerusform>
            <numerusform>%n Dateien, gespeichert in %1</numerusform>
        </translation>
    </message>
    <message>
        <source>on disk</source>
        <translation>auf der Festplatte</translation>
    </message>
    <message>
        <source>SHA-256 checked</source>
        <translation>SHA-256 geprüft</translation>
    </message>
    <message>
        <source>The hub publishes this file&apos;s SHA-256; the download is verified against it.</source>
        <translation>Der Hub veröffentlicht die SHA-256 dieser Datei; der Download wird damit geprüft.</translation>
    </message>
    <message>
        <source>%1 of %2</source>
        <translation>%1 von %2</translation>
    </message>
    <message>
        <source>%1/s</source>
        <translation>%1/s</translation>
    </message>
    <message>
        <source>Resume</source>
        <translation>Fortsetzen</translation>
    </message>
    <message>
        <source>Download</source>
        <translation>Herunterladen</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>Abbrechen</translation>
    </message>
    <message numerus="yes">
        <source>%n file(s) chosen, %1</source>
        <translation>
            <numerusform>%n Datei gewählt, %1</numerusform>
            <numerusform>%n Dateien gewählt, %1</numerusform>
        </translation>
    </message>
    <message>
        <source>Tick the files to download.</source>
        <translation>Haken Sie die Dateien an, die heruntergeladen werden sollen.</translation>
    </message>
    <message>
        <source>Done</source>
        <translation>Fertig</translation>
    </message>
    <message>
        <source>Using the Hugging Face token from %1.</source>
        <translation>Verwendet wird das Hugging-Face-Token aus %1.</translation>
    </message>
    <message>
        <source>attempt %1 of %2</source>
        <translation>Versuch %1 von %2</translation>
    </message>
    <message>
        <source>Save into the Hugging Face cache (shared with Python tools and llama.cpp)</source>
        <translation>Im Hugging-Face-Cache speichern (gemeinsam mit Python-Werkzeugen und llama.cpp)</translation>
    </message>
    <message numerus="yes">
        <source>Downloaded into %1; %n file(s) were already in the Hugging Face cache and are used from there. The model is in the Models page&apos;s library.</source>
        <translation>
            <numerusform>Heruntergeladen nach %1; %n Datei lag schon im Hugging-Face-Cache und wird von dort verwendet. Das Modell steht in der Bibliothek der Seite „Modelle“.</numerusform>
            <numerusform>Heruntergeladen nach %1; %n Dateien lagen schon im Hugging-Face-Cache und werden von dort verwendet. Das Modell steht in der Bibliothek der Seite „Modelle“.</numerusform>
        </translation>
    </message>
    <message>
        <source>SHA-1 checked</source>
        <translation>SHA-1 geprüft</translation>
    </message>
    <message>
        <source>The hub publishes this file&apos;s git SHA-1; the download is verified against it.</source>
        <translation>Der Hub veröffentlicht den Git-SHA-1 dieser Datei; der Download wird damit geprüft.</translation>
    </message>
    <message>
        <source>Checking the copy already on disk: %1 %</source>
        <translation>Die schon vorhandene Kopie wird geprüft: %1 %</translation>
    </message>
</context>
<context>
    <name>EngineWording</name>
    <message>
        <source>16-bit storage</source>
        <translation>16-Bit-Speicher</translation>
    </message>
    <message>
        <source>8-bit storage</source>
        <translation>8-Bit-Speicher</translation>
    </message>
    <message>
        <source>integer dot product (hardware)</source>
        <translation>Ganzzahl-Skalarprodukt (Hardware)</translation>
    </message>
    <message>
        <source>integer dot product (emulated)</source>
        <translation>Ganzzahl-Skalarprodukt (emuliert)</translation>
    </message>
    <message>
        <source>cooperative matrix</source>
        <translation>Cooperative Matrix</translation>
    </message>
    <message>
        <source>no %1 device: no NPU driver is loaded (Ryzen AI NPUs need the amdxdna driver, Linux 6.14 or later)</source>
        <translation>kein Gerät %1: Es ist kein NPU-Treiber geladen (Ryzen-AI-NPUs brauchen den Treiber amdxdna, ab Linux 6.14)</translation>
    </message>
    <message>
        <source>the attention kernel is built for the Phoenix NPU (npu1), not %1</source>
        <translation>der Attention-Kernel ist für die Phoenix-NPU (npu1) gebaut, nicht für %1</translation>
    </message>
    <message>
        <source>cannot open %1 (add your user to the group that owns it, usually “render”)</source>
        <translation>%1 lässt sich nicht öffnen (fügen Sie Ihren Benutzer der Gruppe hinzu, der es gehört, meist „render“)</translation>
    </message>
    <message>
        <source>Kiln was built without XRT (the NPU needs the XRT built with AMD’s xdna-driver)</source>
        <translation>Kiln wurde ohne XRT gebaut (die NPU braucht das mit AMDs xdna-driver gebaute XRT)</translation>
    </message>
    <message>
        <source>Kiln was built with XRT %1, which has no xrt::hw_context (the NPU needs the XRT built with AMD’s xdna-driver)</source>
        <translation>Kiln wurde mit XRT %1 gebaut, das kein xrt::hw_context hat (die NPU braucht das mit AMDs xdna-driver gebaute XRT)</translation>
    </message>
    <message>
        <source>the NPU kernels are not installed (%1 is missing)</source>
        <translation>die NPU-Kernel sind nicht installiert (%1 fehlt)</translation>
    </message>
    <message>
        <source>%1 is driven by “%2”, not amdxdna: no Ryzen AI NPU</source>
        <translation>%1 wird von „%2“ betrieben, nicht von amdxdna: keine Ryzen-AI-NPU</translation>
    </message>
    <message>
        <source>Kiln was built without NPU support</source>
        <translation>Kiln wurde ohne NPU-Unterstützung gebaut</translation>
    </message>
    <message>
        <source>no NPU was found</source>
        <translation>es wurde keine NPU gefunden</translation>
    </message>
    <message>
        <source>NPU attention was asked for, but %1; attention runs on the %2</source>
        <translation>NPU-Attention war gewünscht, aber %1; die Attention läuft auf der %2</translation>
    </message>
    <message>
        <source>attention on the GPU needs the Vulkan backend; attention runs on the CPU</source>
        <translation>Attention auf der GPU braucht das Vulkan-Backend; die Attention läuft auf der CPU</translation>
    </message>
    <message>
        <source>Vulkan works but found no device (no GPU driver installed?)</source>
        <translation>Vulkan funktioniert, hat aber kein Gerät gefunden (kein GPU-Treiber installiert?)</translation>
    </message>
    <message>
        <source>no Vulkan device found (no GPU driver installed?)</source>
        <translation>kein Vulkan-Gerät gefunden (kein GPU-Treiber installiert?)</translation>
    </message>
    <message>
        <source>the only Vulkan device is software Vulkan, which runs only when Vulkan is chosen in Settings</source>
        <translation>das einzige Vulkan-Gerät ist Software-Vulkan, das nur läuft, wenn Vulkan in den Einstellungen gewählt ist</translation>
    </message>
    <message>
        <source>no Vulkan device Kiln can use (the Hardware page says why)</source>
        <translation>kein Vulkan-Gerät, das Kiln nutzen kann (die Seite Hardware sagt, warum)</translation>
    </message>
    <message>
        <source>Vulkan not used: %1; running on the CPU</source>
        <translation>Vulkan nicht genutzt: %1; das Modell läuft auf der CPU</translation>
    </message>
    <message>
        <source>the Vulkan backend keeps attention on the GPU; the NPU attention setting applies to the CPU backend</source>
        <translation>das Vulkan-Backend rechnet die Attention auf der GPU; die Einstellung NPU-Attention gilt für das CPU-Backend</translation>
    </message>
    <message>
        <source>Kiln was built without Vulkan; running on the CPU</source>
        <translation>Kiln wurde ohne Vulkan gebaut; das Modell läuft auf der CPU</translation>
    </message>
    <message>
        <source>embedding (also the output projection) held in %1</source>
        <translation>Embedding (zugleich die Ausgabeprojektion) als %1 gehalten</translation>
    </message>
    <message>
        <source>Vulkan %1 (Kiln needs 1.1 or newer)</source>
        <translation>Vulkan %1 (Kiln braucht 1.1 oder neuer)</translation>
    </message>
    <message>
        <source>no buffer device addresses (Vulkan 1.2 bufferDeviceAddress)</source>
        <translation>keine Buffer-Geräteadressen (Vulkan 1.2 bufferDeviceAddress)</translation>
    </message>
    <message>
        <source>no compute queue</source>
        <translation>keine Compute-Queue</translation>
    </message>
    <message>
        <source>no subgroup arithmetic in compute shaders</source>
        <translation>keine Subgroup-Arithmetik in Compute-Shadern</translation>
    </message>
    <message>
        <source>subgroup size %1 (Kiln needs at least 4)</source>
        <translation>Subgroup-Größe %1 (Kiln braucht mindestens 4)</translation>
    </message>
    <message>
        <source>workgroups of 256 invocations not supported</source>
        <translation>Workgroups mit 256 Aufrufen werden nicht unterstützt</translation>
    </message>
    <message>
        <source>only %1 bytes of shared memory</source>
        <translation>nur %1 Byte Shared Memory</translation>
    </message>
    <message>
        <source>push constants under 128 bytes</source>
        <translation>Push-Konstanten unter 128 Byte</translation>
    </message>
    <message>
        <source>fewer than 10 storage buffers a shader</source>
        <translation>weniger als 10 Storage-Buffer je Shader</translation>
    </message>
    <message>
        <source>CPU, one thread</source>
        <translation>CPU, ein Thread</translation>
    </message>
    <message>
        <source>CPU, %1 threads</source>
        <translation>CPU, %1 Threads</translation>
    </message>
    <message>
        <source>%1, attention on the %2</source>
        <translation>%1, Attention auf der %2</translation>
    </message>
    <message>
        <source>software Vulkan (slow, for testing): %1</source>
        <translation>Software-Vulkan (langsam, zum Testen): %1</translation>
    </message>
    <message>
        <source>GPU (Vulkan): %1</source>
        <translation>GPU (Vulkan): %1</translation>
    </message>
    <message>
        <source>software Vulkan (slow, for testing): Kiln’s own CPU path is faster, so Automatic never uses it; it runs only when Vulkan is chosen in Settings</source>
        <translation>Software-Vulkan (langsam, zum Testen): Kilns eigener CPU-Pfad ist schneller, deshalb nutzt „Automatisch“ es nie; es läuft nur, wenn Vulkan in den Einstellungen gewählt ist</translation>
    </message>
    <message>
        <source>RAM</source>
        <translation>den Arbeitsspeicher</translation>
    </message>
    <message>
        <source>the memory of %1</source>
        <translation>den Speicher von %1</translation>
    </message>
    <message>
        <source>the context is %1 tokens, not the %2 the model was trained for: that is what fits in %3 beside the weights</source>
        <translation>der Kontext umfasst %1 Tokens, nicht die %2, für die das Modell trainiert wurde: So viel passt neben den Gewichten in %3</translation>
    </message>
</context>
<context>
    <name>GpuFacts</name>
    <message>
        <source>usable</source>
        <translation>nutzbar</translation>
    </message>
    <message>
        <source>not used</source>
        <translation>nicht genutzt</translation>
    </message>
    <message>
        <source>Index</source>
        <translation>Index</translation>
    </message>
    <message>
        <source>Type</source>
        <translation>Typ</translation>
    </message>
    <message>
        <source>Driver</source>
        <translation>Treiber</translation>
    </message>
    <message>
        <source>Vulkan</source>
        <translation>Vulkan</translation>
    </message>
    <message>
        <source>Memory heaps</source>
        <translation>Speicher-Heaps</translation>
    </message>
    <message>
        <source>(device-local)</source>
        <translation>(gerätelokal)</translation>
    </message>
    <message>
        <source>Supports</source>
        <translation>Unterstützt</translation>
    </message>
    <message>
        <source>Subgroup size</source>
        <translation>Subgroup-Größe</translation>
    </message>
    <message>
        <source>Largest buffer</source>
        <translation>Größter Puffer</translation>
    </message>
    <message>
        <source>Why not used</source>
        <translation>Warum nicht genutzt</translation>
    </message>
    <message>
        <source>integrated GPU</source>
        <translation>integrierte GPU</translation>
    </message>
    <message>
        <source>discrete GPU</source>
        <translation>dedizierte GPU</translation>
    </message>
    <message>
        <source>virtual GPU</source>
        <translation>virtuelle GPU</translation>
    </message>
    <message>
        <source>software Vulkan (slow, for testing)</source>
        <translation>Software-Vulkan (langsam, zum Testen)</translation>
    </message>
    <message>
        <source>other</source>
        <translation>andere</translation>
    </message>
    <message>
        <source>runs the model</source>
        <translation>führt das Modell aus</translation>
    </message>
    <message>
        <source>only when chosen</source>
        <translation>nur wenn gewählt</translation>
    </message>
    <message>
        <source>Note</source>
        <translation>Hinweis</translation>
    </message>
</context>
<context>
    <name>HardwarePage</name>
    <message>
        <source>Hardware</source>
        <translation>Hardware</translation>
    </message>
    <message>
        <source>What this computer offers the engine, and what it does while answering.</source>
        <translation>Was dieser Computer der Engine bietet und was er beim Antworten tut.</translation>
    </message>
    <message>
        <source>Probe again</source>
        <translation>Neu erkennen</translation>
    </message>
    <message>
        <source>While generating</source>
        <translation>Beim Generieren</translation>
    </message>
    <message>
        <source>Live: the answer being written now</source>
        <translation>Live: die Antwort, die gerade entsteht</translation>
    </message>
    <message>
        <source>The last answer; the plots move while the next one is written</source>
        <translation>Die letzte Antwort; die Kurven bewegen sich, während die nächste entsteht</translation>
    </message>
    <message>
        <source>Tokens per second</source>
        <translation>Tokens pro Sekunde</translation>
    </message>
    <message>
        <source>tok/s</source>
        <translation>Tok./s</translation>
    </message>
    <message>
        <source>s</source>
        <translation>s</translation>
    </message>
    <message>
        <source>Memory in use</source>
        <translation>Belegter Speicher</translation>
    </message>
    <message>
        <source>MiB</source>
        <translation>MiB</translation>
    </message>
    <message>
        <source>GPU busy</source>
        <translation>GPU-Auslastung</translation>
    </message>
    <message>
        <source>No data yet</source>
        <translation>Noch keine Daten</translation>
    </message>
    <message>
        <source>This GPU&apos;s driver does not report it</source>
        <translation>Der Treiber dieser GPU meldet das nicht</translation>
    </message>
    <message>
        <source>Processor and memory</source>
        <translation>Prozessor und Speicher</translation>
    </message>
    <message>
        <source>CPU</source>
        <translation>CPU</translation>
    </message>
    <message>
        <source>Cores</source>
        <translation>Kerne</translation>
    </message>
    <message>
        <source>%1 logical</source>
        <translation>%1 logische</translation>
    </message>
    <message>
        <source>Memory</source>
        <translation>Arbeitsspeicher</translation>
    </message>
    <message>
        <source>%1 total, %2 available</source>
        <translation>%1 insgesamt, %2 verfügbar</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>Status</translation>
    </message>
    <message>
        <source>Probing…</source>
        <translation>Wird erkannt …</translation>
    </message>
    <message>
        <source>NPU</source>
        <translation>NPU</translation>
    </message>
    <message>
        <source>Present</source>
        <translation>Vorhanden</translation>
    </message>
    <message>
        <source>Yes</source>
        <translation>Ja</translation>
    </message>
    <message>
        <source>Generation</source>
        <translation>Generation</translation>
    </message>
    <message>
        <source>Device</source>
        <translation>Gerät</translation>
    </message>
    <message>
        <source>XRT</source>
        <translation>XRT</translation>
    </message>
    <message>
        <source>No</source>
        <translation>Nein</translation>
    </message>
    <message>
        <source>Why not</source>
        <translation>Warum nicht</translation>
    </message>
    <message>
        <source>Graphics (Vulkan)</source>
        <translation>Grafik (Vulkan)</translation>
    </message>
    <message>
        <source>No Vulkan device: the engine runs on the CPU.</source>
        <translation>Kein Vulkan-Gerät: Die Engine läuft auf der CPU.</translation>
    </message>
    <message>
        <source>Running the model now</source>
        <translation>Wo das Modell gerade läuft</translation>
    </message>
    <message>
        <source>%1 runs on: %2</source>
        <translation>%1 läuft auf: %2</translation>
    </message>
    <message>
        <source>A model is being loaded…</source>
        <translation>Ein Modell wird geladen …</translation>
    </message>
    <message>
        <source>No model is loaded.</source>
        <translation>Es ist kein Modell geladen.</translation>
    </message>
    <message>
        <source>This Vulkan device is the CPU pretending to be a GPU: choose Automatic or CPU in Settings for answers many times faster.</source>
        <translation>Dieses Vulkan-Gerät ist die CPU, die eine GPU nachahmt: Wählen Sie in den Einstellungen „Automatisch“ oder „CPU“, und die Antworten kommen um ein Vielfaches schneller.</translation>
    </message>
</context>
<context>
    <name>ImageAttachments</name>
    <message>
        <source>%1: the file does not exist</source>
        <translation>%1: Die Datei existiert nicht</translation>
    </message>
    <message>
        <source>%1: not a file</source>
        <translation>%1: keine Datei</translation>
    </message>
    <message>
        <source>%1: the file cannot be read</source>
        <translation>%1: Die Datei kann nicht gelesen werden</translation>
    </message>
    <message>
        <source>%1: the file is empty</source>
        <translation>%1: Die Datei ist leer</translation>
    </message>
    <message>
        <source>%1: the image is larger than %2 MiB</source>
        <translation>%1: Das Bild ist größer als %2 MiB</translation>
    </message>
    <message>
        <source>%1: not a PNG, JPEG or WebP image</source>
        <translation>%1: kein PNG-, JPEG- oder WebP-Bild</translation>
    </message>
    <message>
        <source>%1: the file cannot be read (%2)</source>
        <translation>%1: Die Datei kann nicht gelesen werden (%2)</translation>
    </message>
</context>
<context>
    <name>LineChart</name>
    <message>
        <source>No data yet</source>
        <translation>Noch keine Daten</translation>
    </message>
</context>
<context>
    <name>LoadPanel</name>
    <message>
        <source>Full quality, twice the memory of INT8</source>
        <translation>Volle Qualität, doppelter Speicher von INT8</translation>
    </message>
    <message>
        <source>Close to FP16, half its size</source>
        <translation>Nah an FP16, halb so groß</translation>
    </message>
    <message>
        <source>Smallest and fastest; some quality lost</source>
        <translation>Am kleinsten und schnellsten; etwas Qualitätsverlust</translation>
    </message>
    <message>
        <source>Reading weights</source>
        <translation>Gewichte werden gelesen</translation>
    </message>
    <message>
        <source>Quantizing</source>
        <translation>Quantisierung</translation>
    </message>
    <message>
        <source>Uploading to the GPU</source>
        <translation>Übertragung zur GPU</translation>
    </message>
    <message>
        <source>Ready</source>
        <translation>Bereit</translation>
    </message>
    <message>
        <source>No model chosen</source>
        <translation>Kein Modell gewählt</translation>
    </message>
    <message>
        <source>Pick one from the library, or open a folder or file.</source>
        <translation>Wählen Sie eines aus der Bibliothek oder öffnen Sie einen Ordner oder eine Datei.</translation>
    </message>
    <message>
        <source>Precision</source>
        <translation>Genauigkeit</translation>
    </message>
    <message>
        <source>Weights only; the context cache comes on top. Backend: %1. Change it in Settings.</source>
        <translation>Nur Gewichte; der Kontext-Cache kommt hinzu. Backend: %1. Ändern Sie es in den Einstellungen.</translation>
    </message>
    <message>
        <source>automatic</source>
        <translation>automatisch</translation>
    </message>
    <message>
        <source>Reload with these settings</source>
        <translation>Mit diesen Einstellungen neu laden</translation>
    </message>
    <message>
        <source>Load</source>
        <translation>Laden</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>Abbrechen</translation>
    </message>
    <message>
        <source>Start chatting</source>
        <translation>Chat beginnen</translation>
    </message>
    <message>
        <source>Unload</source>
        <translation>Entladen</translation>
    </message>
    <message>
        <source>Loaded: %1, %2 of weights</source>
        <translation>Geladen: %1, %2 Gewichte</translation>
    </message>
    <message>
        <source>As stored</source>
        <translation>Wie gespeichert</translation>
    </message>
    <message>
        <source>The file&apos;s own quantization: %1</source>
        <translation>Die Quantisierung der Datei: %1</translation>
    </message>
    <message>
        <source>INT8: a Hugging Face folder stores no quantization</source>
        <translation>INT8: ein Hugging-Face-Ordner speichert keine Quantisierung</translation>
    </message>
    <message>
        <source>The exact reference, twice the memory of FP16</source>
        <translation>Die exakte Referenz, doppelt so viel Speicher wie FP16</translation>
    </message>
    <message>
        <source>%1 (%2 is still loaded and answers as before.)</source>
        <translation>%1 (%2 bleibt geladen und antwortet wie bisher.)</translation>
    </message>
    <message>
        <source>CPU</source>
        <translation>CPU</translation>
    </message>
    <message>
        <source>Vulkan</source>
        <translation>Vulkan</translation>
    </message>
</context>
<context>
    <name>Main</name>
    <message>
        <source>Chat</source>
        <translation>Chat</translation>
    </message>
    <message>
        <source>Models</source>
        <translation>Modelle</translation>
    </message>
    <message>
        <source>Hardware</source>
        <translation>Hardware</translation>
    </message>
    <message>
        <source>Profiler</source>
        <translation>Profiler</translation>
    </message>
    <message>
        <source>Settings</source>
        <translation>Einstellungen</translation>
    </message>
    <message>
        <source>Downloads</source>
        <translation>Downloads</translation>
    </message>
    <message>
        <source>Catalogue</source>
        <translation>Katalog</translation>
    </message>
</context>
<context>
    <name>MessageBubble</name>
    <message>
        <source>Cancel</source>
        <translation>Abbrechen</translation>
    </message>
    <message>
        <source>Send again</source>
        <translation>Erneut senden</translation>
    </message>
    <message>
        <source>Copy</source>
        <translation>Kopieren</translation>
    </message>
    <message>
        <source>Edit and send again</source>
        <translation>Bearbeiten und erneut senden</translation>
    </message>
    <message>
        <source>Regenerate</source>
        <translation>Neu generieren</translation>
    </message>
    <message>
        <source>Previous version</source>
        <translation>Vorherige Version</translation>
    </message>
    <message>
        <source>%1/%2</source>
        <translation>%1/%2</translation>
    </message>
    <message>
        <source>Next version</source>
        <translation>Nächste Version</translation>
    </message>
    <message numerus="yes">
        <source>The conversation is longer than the model&apos;s context: it no longer saw the first %n message(s).</source>
        <translation>
            <numerusform>Die Unterhaltung ist länger als der Kontext des Modells: Die erste Nachricht hat es nicht mehr gesehen.</numerusform>
            <numerusform>Die Unterhaltung ist länger als der Kontext des Modells: Die ersten %n Nachrichten hat es nicht mehr gesehen.</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>ModelBadge</name>
    <message>
        <source>Open the Models page</source>
        <translation>Die Seite „Modelle“ öffnen</translation>
    </message>
    <message>
        <source>Loading… %1 %</source>
        <translation>Wird geladen … %1 %</translation>
    </message>
    <message>
        <source>No model</source>
        <translation>Kein Modell</translation>
    </message>
    <message>
        <source>%1 · remote · %2</source>
        <translation>%1 · entfernt · %2</translation>
    </message>
</context>
<context>
    <name>ModelFactsCard</name>
    <message>
        <source>Facts</source>
        <translation>Eckdaten</translation>
    </message>
    <message>
        <source>As loaded</source>
        <translation>Wie geladen</translation>
    </message>
    <message>
        <source>Read from the model&apos;s files; weights not loaded</source>
        <translation>Aus den Modelldateien gelesen; Gewichte nicht geladen</translation>
    </message>
    <message>
        <source>Architecture</source>
        <translation>Architektur</translation>
    </message>
    <message>
        <source>Format</source>
        <translation>Format</translation>
    </message>
    <message>
        <source>Parameters</source>
        <translation>Parameter</translation>
    </message>
    <message>
        <source>Layers</source>
        <translation>Schichten</translation>
    </message>
    <message>
        <source>%1 (%2 global, the rest sliding-window)</source>
        <translation>%1 (%2 global, die übrigen mit gleitendem Fenster)</translation>
    </message>
    <message>
        <source>Hidden size</source>
        <translation>Verborgene Größe</translation>
    </message>
    <message>
        <source>Attention heads</source>
        <translation>Attention-Köpfe</translation>
    </message>
    <message>
        <source>%1 query, %2 key/value, %3 wide</source>
        <translation>%1 Query, %2 Key/Value, %3 breit</translation>
    </message>
    <message>
        <source>Feed-forward size</source>
        <translation>Feed-Forward-Größe</translation>
    </message>
    <message>
        <source>Vocabulary</source>
        <translation>Vokabular</translation>
    </message>
    <message>
        <source>Sliding window</source>
        <translation>Gleitendes Fenster</translation>
    </message>
    <message>
        <source>%1 tokens</source>
        <translation>%1 Tokens</translation>
    </message>
    <message>
        <source>Trained context</source>
        <translation>Trainierter Kontext</translation>
    </message>
    <message>
        <source>Context allocated</source>
        <translation>Reservierter Kontext</translation>
    </message>
    <message>
        <source>Runs on</source>
        <translation>Läuft auf</translation>
    </message>
    <message>
        <source>Weights in memory</source>
        <translation>Gewichte im Speicher</translation>
    </message>
    <message>
        <source>Context cache</source>
        <translation>Kontext-Cache</translation>
    </message>
    <message>
        <source>Notes</source>
        <translation>Hinweise</translation>
    </message>
    <message>
        <source>Stored as</source>
        <translation>Gespeichert als</translation>
    </message>
    <message>
        <source>%1 tensors</source>
        <translation>%1 Tensoren</translation>
    </message>
</context>
<context>
    <name>ModelFolderPicker</name>
    <message>
        <source>%1: no such folder, and not a .gguf file</source>
        <translation>%1: kein solcher Ordner und keine .gguf-Datei</translation>
    </message>
    <message>
        <source>Open a model</source>
        <translation>Modell öffnen</translation>
    </message>
    <message>
        <source>Type or paste a path, or browse. A Hugging Face model is a folder with config.json: open it, then choose “Open this folder”. A .gguf file opens with a click.</source>
        <translation>Geben Sie einen Pfad ein, fügen Sie ihn ein oder blättern Sie. Ein Hugging-Face-Modell ist ein Ordner mit config.json: Öffnen Sie ihn und wählen Sie dann „Diesen Ordner öffnen“. Eine .gguf-Datei öffnet sich mit einem Klick.</translation>
    </message>
    <message>
        <source>Up one folder</source>
        <translation>Einen Ordner nach oben</translation>
    </message>
    <message>
        <source>A folder or .gguf file, e.g. ~/models/gemma-3-1b-it</source>
        <translation>Ein Ordner oder eine .gguf-Datei, z. B. ~/models/gemma-3-1b-it</translation>
    </message>
    <message>
        <source>Go</source>
        <translation>Los</translation>
    </message>
    <message>
        <source>model</source>
        <translation>Modell</translation>
    </message>
    <message>
        <source>No folders or .gguf files here.</source>
        <translation>Hier gibt es keine Ordner oder .gguf-Dateien.</translation>
    </message>
    <message>
        <source>This folder holds a model.</source>
        <translation>Dieser Ordner enthält ein Modell.</translation>
    </message>
    <message>
        <source>No model in this folder (no config.json).</source>
        <translation>Kein Modell in diesem Ordner (keine config.json).</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>Abbrechen</translation>
    </message>
    <message>
        <source>Open this folder</source>
        <translation>Diesen Ordner öffnen</translation>
    </message>
</context>
<context>
    <name>ModelListItem</name>
    <message>
        <source>Bundled</source>
        <translation>Mitgeliefert</translation>
    </message>
    <message>
        <source>Downloaded</source>
        <translation>Heruntergeladen</translation>
    </message>
    <message>
        <source>Recent</source>
        <translation>Zuletzt geöffnet</translation>
    </message>
    <message>
        <source>loaded</source>
        <translation>geladen</translation>
    </message>
    <message>
        <source>missing</source>
        <translation>fehlt</translation>
    </message>
    <message>
        <source>Remove from the list</source>
        <translation>Aus der Liste entfernen</translation>
    </message>
    <message>
        <source>Hugging Face cache</source>
        <translation>Hugging-Face-Cache</translation>
    </message>
</context>
<context>
    <name>ModelsPage</name>
    <message>
        <source>Models</source>
        <translation>Modelle</translation>
    </message>
    <message>
        <source>Open a Gemma 3 model — a Hugging Face folder or a .gguf file — and choose how it is held in memory.</source>
        <translation>Öffnen Sie ein Gemma-3-Modell – einen Hugging-Face-Ordner oder eine .gguf-Datei – und wählen Sie, wie es im Speicher gehalten wird.</translation>
    </message>
    <message>
        <source>Library</source>
        <translation>Bibliothek</translation>
    </message>
    <message>
        <source>Open folder…</source>
        <translation>Ordner öffnen …</translation>
    </message>
    <message>
        <source>Open file…</source>
        <translation>Datei öffnen …</translation>
    </message>
    <message>
        <source>Bundled, downloaded on the Downloads page into %1, found in the Hugging Face cache, and recently opened.</source>
        <translation>Mitgeliefert, auf der Seite „Downloads“ nach %1 heruntergeladen, im Hugging-Face-Cache gefunden und zuletzt geöffnet.</translation>
    </message>
    <message>
        <source>No models yet. Open a folder or a file, or download one on the Downloads page.</source>
        <translation>Noch keine Modelle. Öffnen Sie einen Ordner oder eine Datei, oder laden Sie eines auf der Seite „Downloads“ herunter.</translation>
    </message>
    <message>
        <source>Downloads page</source>
        <translation>Seite „Downloads“</translation>
    </message>
</context>
<context>
    <name>ProfilerPage</name>
    <message>
        <source>Export a Chrome trace</source>
        <translation>Einen Chrome-Trace exportieren</translation>
    </message>
    <message>
        <source>Chrome trace (*.json)</source>
        <translation>Chrome-Trace (*.json)</translation>
    </message>
    <message>
        <source>Saved. Open it in ui.perfetto.dev or chrome://tracing.</source>
        <translation>Gespeichert. Öffnen Sie ihn in ui.perfetto.dev oder chrome://tracing.</translation>
    </message>
    <message>
        <source>Profiler</source>
        <translation>Profiler</translation>
    </message>
    <message>
        <source>Where the time of the last answer went.</source>
        <translation>Wofür die Zeit der letzten Antwort verwendet wurde.</translation>
    </message>
    <message>
        <source>Profile answers</source>
        <translation>Antworten messen</translation>
    </message>
    <message>
        <source>Export trace…</source>
        <translation>Trace exportieren …</translation>
    </message>
    <message>
        <source>Profiling was off for this answer. Turn on “Profile answers” and ask again to see per-operation times.</source>
        <translation>Für diese Antwort war die Messung aus. Schalten Sie „Antworten messen“ ein und fragen Sie erneut, um die Zeiten je Operation zu sehen.</translation>
    </message>
    <message>
        <source>Nothing measured yet</source>
        <translation>Noch nichts gemessen</translation>
    </message>
    <message>
        <source>Turn on “Profile answers”, then ask something on the Chat page. The timings of the last answer appear here.</source>
        <translation>Schalten Sie „Antworten messen“ ein und stellen Sie dann im Chat eine Frage. Die Zeiten der letzten Antwort erscheinen hier.</translation>
    </message>
    <message>
        <source>Prompt</source>
        <translation>Prompt</translation>
    </message>
    <message numerus="yes">
        <source>%n token(s)</source>
        <translation>
            <numerusform>%n Token</numerusform>
            <numerusform>%n Tokens</numerusform>
        </translation>
    </message>
    <message>
        <source>Answer</source>
        <translation>Antwort</translation>
    </message>
    <message>
        <source>First token after</source>
        <translation>Erstes Token nach</translation>
    </message>
    <message>
        <source>Prompt reading</source>
        <translation>Prompt lesen</translation>
    </message>
    <message>
        <source>%1 tok/s</source>
        <translation>%1 Tok./s</translation>
    </message>
    <message>
        <source>Writing</source>
        <translation>Schreiben</translation>
    </message>
    <message>
        <source>Total</source>
        <translation>Gesamt</translation>
    </message>
    <message>
        <source>Tokens per second along the answer</source>
        <translation>Tokens pro Sekunde im Verlauf der Antwort</translation>
    </message>
    <message>
        <source>tok/s</source>
        <translation>Tok./s</translation>
    </message>
    <message>
        <source>tokens</source>
        <translation>Tokens</translation>
    </message>
    <message>
        <source>Too short an answer to plot</source>
        <translation>Die Antwort ist zu kurz für eine Kurve</translation>
    </message>
    <message>
        <source>By operation</source>
        <translation>Nach Operation</translation>
    </message>
    <message>
        <source>Share of the measured time</source>
        <translation>Anteil an der gemessenen Zeit</translation>
    </message>
    <message>
        <source>By layer</source>
        <translation>Nach Schicht</translation>
    </message>
    <message>
        <source>Each bar is one layer, split by operation</source>
        <translation>Jeder Balken ist eine Schicht, aufgeteilt nach Operation</translation>
    </message>
    <message>
        <source>Save</source>
        <translation>Speichern</translation>
    </message>
</context>
<context>
    <name>RemoteEndpointsCard</name>
    <message>
        <source>Remote endpoints</source>
        <translation>Entfernte Endpunkte</translation>
    </message>
    <message>
        <source>Models served elsewhere through the OpenAI-compatible API: another Kiln, vLLM, SGLang, llama.cpp&apos;s server or Ollama.</source>
        <translation>Modelle, die anderswo über die OpenAI-kompatible API bereitgestellt werden: ein anderes Kiln, vLLM, SGLang, der Server von llama.cpp oder Ollama.</translation>
    </message>
    <message>
        <source>This build of Kiln cannot reach remote endpoints.</source>
        <translation>Dieser Build von Kiln kann keine entfernten Endpunkte erreichen.</translation>
    </message>
    <message>
        <source>with API key</source>
        <translation>mit API-Schlüssel</translation>
    </message>
    <message>
        <source>List its models again</source>
        <translation>Modelle erneut abfragen</translation>
    </message>
    <message>
        <source>Remove this endpoint</source>
        <translation>Diesen Endpunkt entfernen</translation>
    </message>
    <message>
        <source>Asking for its models…</source>
        <translation>Modelle werden abgefragt …</translation>
    </message>
    <message>
        <source>Chat with this model</source>
        <translation>Mit diesem Modell chatten</translation>
    </message>
    <message>
        <source>Remote · in use</source>
        <translation>Entfernt · in Verwendung</translation>
    </message>
    <message>
        <source>Remote</source>
        <translation>Entfernt</translation>
    </message>
    <message>
        <source>Address, e.g. http://192.168.1.20:8080/v1</source>
        <translation>Adresse, z. B. http://192.168.1.20:8080/v1</translation>
    </message>
    <message>
        <source>API key (if it needs one)</source>
        <translation>API-Schlüssel (falls nötig)</translation>
    </message>
    <message>
        <source>Add</source>
        <translation>Hinzufügen</translation>
    </message>
</context>
<context>
    <name>SearchField</name>
    <message>
        <source>Clear</source>
        <translation>Leeren</translation>
    </message>
</context>
<context>
    <name>SettingOrigins</name>
    <message>
        <source>Where these settings come from (%1)</source>
        <translation>Woher diese Einstellungen stammen (%1)</translation>
    </message>
</context>
<context>
    <name>SettingsPage</name>
    <message>
        <source>Settings</source>
        <translation>Einstellungen</translation>
    </message>
    <message>
        <source>Saved as you change them.</source>
        <translation>Änderungen werden sofort gespeichert.</translation>
    </message>
    <message>
        <source>The loaded model still uses the previous loading settings.</source>
        <translation>Das geladene Modell verwendet noch die vorherigen Ladeeinstellungen.</translation>
    </message>
    <message>
        <source>Reload now</source>
        <translation>Jetzt neu laden</translation>
    </message>
    <message>
        <source>Loading the model</source>
        <translation>Laden des Modells</translation>
    </message>
    <message>
        <source>Precision</source>
        <translation>Genauigkeit</translation>
    </message>
    <message>
        <source>Backend</source>
        <translation>Backend</translation>
    </message>
    <message>
        <source>Where the model runs. Automatic picks the best Vulkan GPU and falls back to the CPU.</source>
        <translation>Wo das Modell läuft. „Automatisch“ wählt die beste Vulkan-GPU und weicht sonst auf die CPU aus.</translation>
    </message>
    <message>
        <source>Automatic</source>
        <translation>Automatisch</translation>
    </message>
    <message>
        <source>see the Hardware page</source>
        <translation>siehe die Seite „Hardware“</translation>
    </message>
    <message>
        <source>NPU attention</source>
        <translation>Attention auf der NPU</translation>
    </message>
    <message>
        <source>Run attention on the %1 NPU.</source>
        <translation>Attention auf der NPU (%1) ausführen.</translation>
    </message>
    <message>
        <source>Not available: %1</source>
        <translation>Nicht verfügbar: %1</translation>
    </message>
    <message>
        <source>no NPU found</source>
        <translation>keine NPU gefunden</translation>
    </message>
    <message>
        <source>On</source>
        <translation>An</translation>
    </message>
    <message>
        <source>Off</source>
        <translation>Aus</translation>
    </message>
    <message>
        <source>Context length</source>
        <translation>Kontextlänge</translation>
    </message>
    <message>
        <source>The most tokens a conversation can hold. Longer takes more memory.</source>
        <translation>Wie viele Tokens eine Unterhaltung höchstens fasst. Länger braucht mehr Speicher.</translation>
    </message>
    <message>
        <source>CPU threads</source>
        <translation>CPU-Threads</translation>
    </message>
    <message>
        <source>0 uses every core (%1 here).</source>
        <translation>0 nutzt alle Kerne (hier %1).</translation>
    </message>
    <message>
        <source>Answers</source>
        <translation>Antworten</translation>
    </message>
    <message>
        <source>Temperature</source>
        <translation>Temperatur</translation>
    </message>
    <message>
        <source>0 always picks the likeliest word; higher is more varied.</source>
        <translation>0 wählt immer das wahrscheinlichste Wort; höher ist abwechslungsreicher.</translation>
    </message>
    <message>
        <source>Top-p</source>
        <translation>Top-p</translation>
    </message>
    <message>
        <source>Sample only from the likeliest words that together hold this probability.</source>
        <translation>Nur aus den wahrscheinlichsten Wörtern wählen, die zusammen diese Wahrscheinlichkeit haben.</translation>
    </message>
    <message>
        <source>Min-p</source>
        <translation>Min-p</translation>
    </message>
    <message>
        <source>Drop words less likely than this fraction of the likeliest one.</source>
        <translation>Wörter verwerfen, die unwahrscheinlicher sind als dieser Bruchteil des wahrscheinlichsten.</translation>
    </message>
    <message>
        <source>Top-k</source>
        <translation>Top-k</translation>
    </message>
    <message>
        <source>Sample from at most this many words (0: no limit).</source>
        <translation>Aus höchstens so vielen Wörtern wählen (0: keine Grenze).</translation>
    </message>
    <message>
        <source>Longest answer</source>
        <translation>Längste Antwort</translation>
    </message>
    <message>
        <source>Local API server</source>
        <translation>Lokaler API-Server</translation>
    </message>
    <message>
        <source>Lets other programs on this computer use the loaded model through an OpenAI-compatible HTTP API.</source>
        <translation>Lässt andere Programme auf diesem Computer das geladene Modell über eine OpenAI-kompatible HTTP-API nutzen.</translation>
    </message>
    <message>
        <source>Serve on localhost</source>
        <translation>Auf localhost bereitstellen</translation>
    </message>
    <message>
        <source>Not part of this build.</source>
        <translation>In diesem Build nicht enthalten.</translation>
    </message>
    <message>
        <source>Serving at %1</source>
        <translation>Bereitgestellt unter %1</translation>
    </message>
    <message>
        <source>Starts when a model is loaded.</source>
        <translation>Startet, sobald ein Modell geladen ist.</translation>
    </message>
    <message>
        <source>Off.</source>
        <translation>Aus.</translation>
    </message>
    <message>
        <source>This build of Kiln has no API server.</source>
        <translation>Dieser Build von Kiln hat keinen API-Server.</translation>
    </message>
    <message>
        <source>Port</source>
        <translation>Port</translation>
    </message>
    <message>
        <source>Appearance</source>
        <translation>Darstellung</translation>
    </message>
    <message>
        <source>Language</source>
        <translation>Sprache</translation>
    </message>
    <message>
        <source>Theme</source>
        <translation>Farbschema</translation>
    </message>
    <message>
        <source>Light</source>
        <translation>Hell</translation>
    </message>
    <message>
        <source>Dark</source>
        <translation>Dunkel</translation>
    </message>
    <message>
        <source>Changes here take effect the next time a model is loaded.</source>
        <translation>Änderungen hier wirken beim nächsten Laden eines Modells.</translation>
    </message>
    <message>
        <source>No Vulkan device: %1</source>
        <translation>Kein Vulkan-Gerät: %1</translation>
    </message>
    <message>
        <source>Downloads</source>
        <translation>Downloads</translation>
    </message>
    <message>
        <source>Gated models such as Google&apos;s Gemma need a Hugging Face account that accepted the licence.</source>
        <translation>Zugangsbeschränkte Modelle wie Googles Gemma brauchen ein Hugging-Face-Konto, das die Lizenz akzeptiert hat.</translation>
    </message>
    <message>
        <source>Hugging Face token</source>
        <translation>Hugging-Face-Token</translation>
    </message>
    <message>
        <source>A read token from huggingface.co/settings/tokens. Left empty, the HF_TOKEN environment variable is used.</source>
        <translation>Ein Lese-Token von huggingface.co/settings/tokens. Bleibt das Feld leer, gilt die Umgebungsvariable HF_TOKEN.</translation>
    </message>
    <message>
        <source>hf_…</source>
        <translation>hf_…</translation>
    </message>
    <message>
        <source>Repeat penalty</source>
        <translation>Wiederholungsstrafe</translation>
    </message>
    <message>
        <source>Makes words used in the last 64 tokens less likely, so long answers do not loop (1: off).</source>
        <translation>Macht Wörter aus den letzten 64 Tokens unwahrscheinlicher, damit lange Antworten sich nicht wiederholen (1: aus).</translation>
    </message>
    <message>
        <source>model default</source>
        <translation>Modellstandard</translation>
    </message>
    <message>
        <source>%1 (model default)</source>
        <translation>%1 (Modellstandard)</translation>
    </message>
    <message>
        <source>Sampling for new answers.</source>
        <translation>Sampling für neue Antworten.</translation>
    </message>
    <message>
        <source>Model defaults</source>
        <translation>Standardwerte des Modells</translation>
    </message>
    <message>
        <source>Settings you have not changed follow the loaded model&apos;s own recommendation (its generation_config.json).</source>
        <translation>Einstellungen, die Sie nicht geändert haben, folgen der Empfehlung des geladenen Modells (seiner generation_config.json).</translation>
    </message>
    <message>
        <source>Use the model&apos;s defaults</source>
        <translation>Standardwerte des Modells verwenden</translation>
    </message>
    <message>
        <source>Use the model&apos;s default</source>
        <translation>Standardwert des Modells verwenden</translation>
    </message>
    <message>
        <source>As stored</source>
        <translation>Wie gespeichert</translation>
    </message>
    <message>
        <source>How the weights are held in memory. As stored keeps a GGUF file&apos;s own quantization (a folder: INT8). FP32 is the exact reference at twice the size of FP16; INT8 is close to FP16 at half the size; INT4 is smaller again.</source>
        <translation>Wie die Gewichte im Speicher gehalten werden. „Wie gespeichert“ behält die Quantisierung einer GGUF-Datei bei (ein Ordner: INT8). FP32 ist die exakte Referenz mit doppelter Größe von FP16; INT8 kommt FP16 bei halber Größe nahe; INT4 ist noch kleiner.</translation>
    </message>
    <message>
        <source>Where the model runs. This computer&apos;s only Vulkan device is software Vulkan (slow, for testing): Automatic runs on the CPU.</source>
        <translation>Wo das Modell läuft. Das einzige Vulkan-Gerät dieses Computers ist Software-Vulkan (langsam, zum Testen): „Automatisch“ läuft auf der CPU.</translation>
    </message>
    <message>
        <source>Software Vulkan</source>
        <translation>Software-Vulkan</translation>
    </message>
    <message>
        <source>Vulkan</source>
        <translation>Vulkan</translation>
    </message>
    <message>
        <source>software Vulkan (slow, for testing)</source>
        <translation>Software-Vulkan (langsam, zum Testen)</translation>
    </message>
    <message>
        <source>CPU</source>
        <translation>CPU</translation>
    </message>
    <message>
        <source>More than the %1 tokens this model was trained for: it is loaded with %1.</source>
        <translation>Mehr als die %1 Tokens, für die dieses Modell trainiert wurde: Es wird mit %1 geladen.</translation>
    </message>
    <message>
        <source>Until the model ends its turn; the context (%1 tokens) is the cap.</source>
        <translation>Bis das Modell seinen Zug beendet; der Kontext (%1 Tokens) ist die Grenze.</translation>
    </message>
    <message>
        <source>the model&apos;s</source>
        <translation>des Modells</translation>
    </message>
    <message>
        <source>Tokens after which an answer stops (0: until the model ends its turn).</source>
        <translation>Tokens, nach denen eine Antwort endet (0: bis das Modell seinen Zug beendet).</translation>
    </message>
    <message>
        <source>End of turn</source>
        <translation>Ende des Zugs</translation>
    </message>
    <message>
        <source>Send with Ctrl+Enter</source>
        <translation>Mit Strg+Eingabe senden</translation>
    </message>
    <message>
        <source>Enter then starts a new line. Off: Enter sends and Shift+Enter starts a new line.</source>
        <translation>Die Eingabetaste beginnt dann eine neue Zeile. Aus: Die Eingabetaste sendet, Umschalt+Eingabe beginnt eine neue Zeile.</translation>
    </message>
    <message>
        <source>The model’s own length as far as memory holds it: %1 tokens here (it was trained for %2).</source>
        <translation>Die eigene Länge des Modells, soweit der Speicher reicht: hier %1 Tokens (trainiert für %2).</translation>
    </message>
    <message>
        <source>The model’s own length as far as memory holds it: all %1 tokens it was trained for.</source>
        <translation>Die eigene Länge des Modells, soweit der Speicher reicht: alle %1 Tokens, für die es trainiert wurde.</translation>
    </message>
    <message>
        <source>The model’s own</source>
        <translation>Die des Modells</translation>
    </message>
</context>
<context>
    <name>SliderRow</name>
    <message>
        <source>Back to the default</source>
        <translation>Zurück zum Standardwert</translation>
    </message>
</context>
<context>
    <name>StatsLine</name>
    <message numerus="yes">
        <source>%n token(s)</source>
        <translation>
            <numerusform>%n Token</numerusform>
            <numerusform>%n Tokens</numerusform>
        </translation>
    </message>
    <message>
        <source>first token %1</source>
        <translation>erstes Token %1</translation>
    </message>
    <message>
        <source>%1 tokens/s</source>
        <translation>%1 Tokens/s</translation>
    </message>
    <message>
        <source>stopped</source>
        <translation>angehalten</translation>
    </message>
    <message>
        <source>length limit reached</source>
        <translation>Längengrenze erreicht</translation>
    </message>
    <message>
        <source>context full</source>
        <translation>Kontext voll</translation>
    </message>
    <message>
        <source>Stopped before the answer began</source>
        <translation>Angehalten, bevor die Antwort begann</translation>
    </message>
</context>
<context>
    <name>SystemPromptEditor</name>
    <message>
        <source>System prompt for this conversation</source>
        <translation>Systemprompt für diese Unterhaltung</translation>
    </message>
    <message>
        <source>For example: You are a concise assistant. Answer in German.</source>
        <translation>Zum Beispiel: Du bist ein knapper Assistent. Antworte auf Deutsch.</translation>
    </message>
</context>
<context>
    <name>kiln::gui::ChatController</name>
    <message>
        <source>Wait for the answer to finish, or stop it.</source>
        <translation>Warten Sie, bis die Antwort fertig ist, oder halten Sie sie an.</translation>
    </message>
    <message>
        <source>No model is loaded. Open one on the Models page.</source>
        <translation>Es ist kein Modell geladen. Öffnen Sie eines auf der Seite „Modelle“.</translation>
    </message>
    <message>
        <source>The model is busy; try again in a moment.</source>
        <translation>Das Modell ist beschäftigt; versuchen Sie es gleich noch einmal.</translation>
    </message>
    <message>
        <source>This model cannot see images. Load a model with a vision tower (Gemma 3 4B, 12B or 27B; a GGUF file needs its mmproj file beside it).</source>
        <translation>Dieses Modell kann keine Bilder sehen. Laden Sie ein Modell mit Vision-Encoder (Gemma 3 4B, 12B oder 27B; eine GGUF-Datei braucht ihre mmproj-Datei daneben).</translation>
    </message>
</context>
<context>
    <name>kiln::gui::DownloadController</name>
    <message>
        <source>This build has no downloader (libcurl was missing).</source>
        <translation>Dieser Build kann nichts herunterladen (libcurl fehlte).</translation>
    </message>
    <message>
        <source>the app&apos;s settings</source>
        <translation>den App-Einstellungen</translation>
    </message>
    <message>
        <source>%1 was not found, or it is private or gated for the account of your token (from %2): check the name.</source>
        <translation>%1 wurde nicht gefunden oder ist für das Konto Ihres Tokens (aus %2) privat oder zugangsbeschränkt: Prüfen Sie den Namen.</translation>
    </message>
    <message>
        <source>%1 was not found, or it is private or gated: check the name, or sign in with a Hugging Face token in Settings → Downloads.</source>
        <translation>%1 wurde nicht gefunden oder ist privat oder zugangsbeschränkt: Prüfen Sie den Namen oder melden Sie sich mit einem Hugging-Face-Token unter Einstellungen → Downloads an.</translation>
    </message>
    <message>
        <source>Your token (from %1) is invalid or expired: create a new one at %2.</source>
        <translation>Ihr Token (aus %1) ist ungültig oder abgelaufen: Erstellen Sie ein neues unter %2.</translation>
    </message>
    <message>
        <source>%1 is gated: accept the licence at %2 with the account of your token (from %3).</source>
        <translation>%1 ist zugangsbeschränkt: Akzeptieren Sie die Lizenz unter %2 mit dem Konto Ihres Tokens (aus %3).</translation>
    </message>
    <message>
        <source>%1 is gated: accept the licence at %2, then enter a token of that account in Settings → Downloads.</source>
        <translation>%1 ist zugangsbeschränkt: Akzeptieren Sie die Lizenz unter %2 und tragen Sie dann ein Token dieses Kontos unter Einstellungen → Downloads ein.</translation>
    </message>
    <message>
        <source>Your access request for %1 is pending: its authors have not reviewed it yet (%2).</source>
        <translation>Ihre Zugriffsanfrage für %1 ist noch offen: Die Autoren haben sie noch nicht geprüft (%2).</translation>
    </message>
    <message>
        <source>This fine-grained token (from %1) lacks access to gated repositories: enable “public gated repositories” in its settings at %2.</source>
        <translation>Diesem feingranularen Token (aus %1) fehlt der Zugriff auf zugangsbeschränkte Repositories: Aktivieren Sie „public gated repositories“ in seinen Einstellungen unter %2.</translation>
    </message>
    <message>
        <source>Not enough free space in %1: the download needs %2, %3 are free.</source>
        <translation>Nicht genug freier Speicherplatz in %1: Der Download braucht %2, frei sind %3.</translation>
    </message>
    <message>
        <source>Connection problem (%1): retrying in %2 s, attempt %3 of %4.</source>
        <translation>Verbindungsproblem (%1): neuer Versuch in %2 s, Versuch %3 von %4.</translation>
    </message>
</context>
<context>
    <name>kiln::gui::EngineController</name>
    <message>
        <source>Unknown load setting: %1 / %2 / %3</source>
        <translation>Unbekannte Ladeeinstellung: %1 / %2 / %3</translation>
    </message>
    <message>
        <source>Choose a model folder or file first.</source>
        <translation>Wählen Sie zuerst einen Modellordner oder eine Modelldatei.</translation>
    </message>
    <message>
        <source>Loading was cancelled.</source>
        <translation>Das Laden wurde abgebrochen.</translation>
    </message>
    <message>
        <source>“%1” is not a web address (http:// or https://).</source>
        <translation>„%1“ ist keine Webadresse (http:// oder https://).</translation>
    </message>
    <message>
        <source>remote</source>
        <translation>entfernt</translation>
    </message>
    <message>
        <source>%1 (a remote endpoint)</source>
        <translation>%1 (ein entfernter Endpunkt)</translation>
    </message>
</context>
<context>
    <name>kiln::gui::EngineWorker</name>
    <message>
        <source>Loading was cancelled.</source>
        <translation>Das Laden wurde abgebrochen.</translation>
    </message>
    <message>
        <source>No model is loaded.</source>
        <translation>Es ist kein Modell geladen.</translation>
    </message>
</context>
<context>
    <name>kiln::gui::LaunchOptions</name>
    <message>
        <source>Model folder or .gguf file to open.</source>
        <translation>Zu öffnender Modellordner oder .gguf-Datei.</translation>
    </message>
    <message>
        <source>path</source>
        <translation>Pfad</translation>
    </message>
    <message>
        <source>Send this message once the model is loaded.</source>
        <translation>Diese Nachricht senden, sobald das Modell geladen ist.</translation>
    </message>
    <message>
        <source>text</source>
        <translation>Text</translation>
    </message>
    <message>
        <source>name</source>
        <translation>Name</translation>
    </message>
    <message>
        <source>Save a PNG of the window when done.</source>
        <translation>Am Ende ein PNG des Fensters speichern.</translation>
    </message>
    <message>
        <source>file</source>
        <translation>Datei</translation>
    </message>
    <message>
        <source>light or dark (this run only).</source>
        <translation>light oder dark (nur für diesen Start).</translation>
    </message>
    <message>
        <source>theme</source>
        <translation>Schema</translation>
    </message>
    <message>
        <source>en or de (this run only).</source>
        <translation>en oder de (nur für diesen Start).</translation>
    </message>
    <message>
        <source>code</source>
        <translation>Code</translation>
    </message>
    <message>
        <source>Quit after the prompt was answered and the screenshot saved.</source>
        <translation>Beenden, nachdem der Prompt beantwortet und das Bildschirmfoto gespeichert ist.</translation>
    </message>
    <message>
        <source>Page to show: chat, models, downloads, hardware, profiler, settings.</source>
        <translation>Anzuzeigende Seite: chat, models, downloads, hardware, profiler, settings.</translation>
    </message>
    <message>
        <source>Hugging Face repository (OWNER/REPO) for the Downloads page to list.</source>
        <translation>Hugging-Face-Repository (OWNER/REPO), das die Seite „Downloads“ auflistet.</translation>
    </message>
    <message>
        <source>repo</source>
        <translation>Repository</translation>
    </message>
    <message>
        <source>Download what the Downloads page suggests for --repo.</source>
        <translation>Herunterladen, was die Seite „Downloads“ für --repo vorschlägt.</translation>
    </message>
    <message>
        <source>Regenerate the answer to --prompt once, so both versions are kept.</source>
        <translation>Die Antwort auf --prompt einmal neu erzeugen, sodass beide Fassungen bleiben.</translation>
    </message>
</context>
<context>
    <name>kiln::gui::ModelCatalogue</name>
    <message>
        <source>Quantization-aware trained: INT4 weights close to full quality.</source>
        <translation>Quantisierungsbewusst trainiert: INT4-Gewichte nahe an voller Qualität.</translation>
    </message>
    <message>
        <source>llama.cpp&apos;s GGUF files; the size shown is the Q8_0 file.</source>
        <translation>GGUF-Dateien von llama.cpp; die angezeigte Größe ist die der Q8_0-Datei.</translation>
    </message>
    <message>
        <source>Google&apos;s release; loads at any precision. Gated: accept the licence on Hugging Face first.</source>
        <translation>Googles Veröffentlichung; lädt in jeder Genauigkeit. Zugangsbeschränkt: Akzeptieren Sie zuerst die Lizenz auf Hugging Face.</translation>
    </message>
    <message>
        <source>this build has no downloads</source>
        <translation>dieser Build kann nichts herunterladen</translation>
    </message>
    <message>
        <source>The hub cannot be reached (%1). The list shows what Kiln knows; sizes are estimates.</source>
        <translation>Der Hub ist nicht erreichbar (%1). Die Liste zeigt, was Kiln weiß; die Größen sind geschätzt.</translation>
    </message>
</context>
<context>
    <name>kiln::gui::ProfileReport</name>
    <message>
        <source>other</source>
        <translation>übrige</translation>
    </message>
    <message>
        <source>Nothing to export yet: generate an answer first.</source>
        <translation>Noch nichts zu exportieren: Lassen Sie zuerst eine Antwort generieren.</translation>
    </message>
    <message>
        <source>%1: cannot be written (%2)</source>
        <translation>%1: kann nicht geschrieben werden (%2)</translation>
    </message>
</context>
<context>
    <name>kiln::gui::RemoteEndpoints</name>
    <message>
        <source>The endpoint lists no models.</source>
        <translation>Der Endpunkt nennt keine Modelle.</translation>
    </message>
    <message>
        <source>This build of Kiln cannot reach remote endpoints.</source>
        <translation>Dieser Build von Kiln kann keine entfernten Endpunkte erreichen.</translation>
    </message>
    <message>
        <source>“%1” is not a web address (http:// or https://).</source>
        <translation>„%1“ ist keine Webadresse (http:// oder https://).</translation>
    </message>
</context>
<context>
    <name>kiln::gui::RemoteWorker</name>
    <message>
        <source>“%1” is not a web address (http:// or https://).</source>
        <translation>„%1“ ist keine Webadresse (http:// oder https://).</translation>
    </message>
    <message>
        <source>Cannot reach %1. Is the server running, and is the address right? (%2)</source>
        <translation>%1 ist nicht erreichbar. Läuft der Server, und stimmt die Adresse? (%2)</translation>
    </message>
    <message>
        <source>%1 refused the API key (HTTP %2). Add the endpoint again with the right key.</source>
        <translation>%1 hat den API-Schlüssel abgelehnt (HTTP %2). Fügen Sie den Endpunkt mit dem richtigen Schlüssel erneut hinzu.</translation>
    </message>
    <message>
        <source>%1 needs an API key (HTTP %2).</source>
        <translation>%1 verlangt einen API-Schlüssel (HTTP %2).</translation>
    </message>
    <message>
        <source>%1 has no such model or address (HTTP 404): %2</source>
        <translation>%1 kennt dieses Modell oder diese Adresse nicht (HTTP 404): %2</translation>
    </message>
    <message>
        <source>The endpoint answered with an error (HTTP %1): %2</source>
        <translation>Der Endpunkt hat mit einem Fehler geantwortet (HTTP %1): %2</translation>
    </message>
    <message>
        <source>The endpoint stopped the answer with an error: %1</source>
        <translation>Der Endpunkt hat die Antwort mit einem Fehler abgebrochen: %1</translation>
    </message>
    <message>
        <source>The endpoint&apos;s answer is not what an OpenAI-compatible server sends: %1</source>
        <translation>Die Antwort des Endpunkts ist nicht das, was ein OpenAI-kompatibler Server sendet: %1</translation>
    </message>
    <message>
        <source>The connection ended before the answer did. %1</source>
        <translation>Die Verbindung endete vor der Antwort. %1</translation>
    </message>
    <message>
        <source>This build of Kiln cannot reach remote endpoints.</source>
        <translation>Dieser Build von Kiln kann keine entfernten Endpunkte erreichen.</translation>
    </message>
</context>
</TS>
