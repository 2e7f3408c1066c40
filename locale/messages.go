package locale

// Key names a text of the visitor pages. Texts with {name} placeholders
// are filled by the page (Fill); the placeholders each text takes are
// listed beside its key.
type Key int

// The pages' texts.
const (
	// Title heads the queue page (and names it in the tab).
	Title Key = iota
	// LabelPlace, LabelAhead, ... label the queue page's facts.
	LabelPlace
	LabelAhead
	LabelWait
	LabelTicket
	LabelServing
	// NobodyYet stands for the number now serving before anyone was.
	NobodyYet
	LabelUpdated
	LabelProgress
	// Turn says what happens when the visitor's turn comes.
	Turn
	// Keep asks the visitor to keep the page open.
	Keep
	// Live says the page updates itself; RefreshNow is the link that
	// reloads it by hand.
	Live
	RefreshNow
	// Support labels the operator's support link.
	Support
	// Fifo, Random ({seconds}, {groups}), Drawn ({starts}), Priority
	// ({share}) and Paused explain how the line moves.
	Fifo
	Random
	Drawn
	Priority
	Paused
	// Announce ({n}) tells a screen reader's user their new place.
	Announce
	// WaitUnknown (the room is full and too few have left it lately),
	// WaitPaused and WaitBeforeStart (a sale's pre-queue) stand for an
	// estimate that cannot be given; LessThanMinute, About ({d}) and Range
	// ({a}, {b}) word one.
	WaitUnknown
	WaitPaused
	WaitBeforeStart
	LessThanMinute
	About
	Range
	// HoursMinutes ({h}, {mm}) and AnyMoment word a countdown.
	HoursMinutes
	AnyMoment
	// DrawNote ({key}, {commitment}) publishes a drawn sale's key.
	DrawNote
	// The pre-queue page: PrequeueIntro ({event}, {starts}),
	// PrequeueCommit ({commitment}).
	PrequeueTitle
	PrequeueIntro
	OpensIn
	PrequeueDraw
	PrequeueCommit
	// The busy page: BusyText ({in}).
	BusyTitle
	BusyText
	// The closed page.
	ClosedTitle
	ClosedText
	// The page for a visitor whose browser did not keep the line's
	// cookie: CookiesText asks for cookies, CookiesApps tells developers
	// of the header, TryAgain links back to the page asked for.
	CookiesTitle
	CookiesText
	CookiesApps
	TryAgain
	// The proof-of-work page, shown while a newcomer's browser works
	// before joining: WorkProgress ({percent}) is announced as it goes.
	WorkTitle
	WorkText
	WorkLabel
	WorkProgress
	WorkDone
	WorkNoScript
	// WorkWait tells a visitor without JavaScript at the lowest rung that
	// the page takes them on by itself.
	WorkWait
	numKeys
)

// Overridable are the keys an operator may replace per language in a
// room's texts (queue.Look.Texts), by these names: whole sentences
// without placeholders, so no override can break a page.
var overridable = [...]struct {
	name string
	key  Key
}{
	{"title", Title}, {"turn", Turn}, {"keep", Keep}, {"support", Support},
	{"busy_title", BusyTitle}, {"closed_title", ClosedTitle}, {"closed_text", ClosedText},
	{"cookies_title", CookiesTitle}, {"cookies_text", CookiesText},
}

// OverrideKey returns the key an operator's text called name replaces;
// ok is false for a name that may not be overridden. "message" is not a
// key: it is the operator's own note, with no built-in text.
func OverrideKey(name string) (Key, bool) {
	for _, o := range overridable {
		if o.name == name {
			return o.key, true
		}
	}
	return 0, false
}

// OverrideNames lists the names OverrideKey accepts.
func OverrideNames() []string {
	out := make([]string, len(overridable))
	for i, o := range overridable {
		out[i] = o.name
	}
	return out
}

// Text returns the text of key in lang (a Supported language; any other
// reads as Default).
func Text(lang string, key Key) string {
	if key < 0 || key >= numKeys {
		return ""
	}
	return catalog(lang)[key]
}

// catalog is lang's texts.
func catalog(lang string) *[numKeys]string {
	switch lang {
	case "de":
		return &de
	case "fr":
		return &fr
	case "es":
		return &es
	case "ja":
		return &ja
	case "pt":
		return &pt
	}
	return &en
}

var en = [numKeys]string{
	Title:           "You are in line",
	LabelPlace:      "Your place in line",
	LabelAhead:      "Ahead of you",
	LabelWait:       "Estimated wait",
	LabelTicket:     "Your ticket",
	LabelServing:    "Now serving",
	NobodyYet:       "nobody yet",
	LabelUpdated:    "Last updated",
	LabelProgress:   "Progress since you arrived",
	Turn:            "When it is your turn, you will continue to the page you asked for automatically.",
	Keep:            "Keep this page open: leaving it for more than a few minutes gives up your place.",
	Live:            "This page updates itself.",
	RefreshNow:      "Refresh now",
	Support:         "Need help? Contact support",
	Fifo:            "The site is busy, so visitors are let in as places free up, in the order they arrived.",
	Random:          "The site is busy. Visitors who arrived within the same {seconds} seconds form a group, and within a group the order is random. Groups ahead of yours: {groups}.",
	Drawn:           "The sale opened at {starts}. Everyone in its pre-queue was given a place in line by a random draw; your turn comes somewhere in the range shown.",
	Priority:        "You hold a priority place: invited visitors are let in ahead of the line, with up to {share}% of the places, so the line keeps moving too.",
	Paused:          "Entry is paused for the moment; your place is kept.",
	Announce:        "You are now number {n} in line.",
	WaitUnknown:     "not known yet: the site is full, and few have left it lately",
	WaitPaused:      "unknown while entry is paused",
	WaitBeforeStart: "not known before the sale opens",
	LessThanMinute:  "less than a minute",
	About:           "about {d}",
	Range:           "{a}–{b}",
	HoursMinutes:    "{h} h {mm} min",
	AnyMoment:       "any moment now",
	DrawNote:        "The draw's key was {key}; its SHA-256, published before the sale, is {commitment}.",
	PrequeueTitle:   "The sale opens soon",
	PrequeueIntro:   "You are in the pre-queue for {event}. It opens at {starts}.",
	OpensIn:         "Opens in",
	PrequeueDraw:    "When it opens, everyone in the pre-queue gets a place in line by a fair random draw: arriving earlier in the pre-queue does not put you further ahead, and you lose nothing by having come now. People who arrive after it opens queue behind the pre-queue.",
	PrequeueCommit:  "The draw's key is fixed in advance; its SHA-256 is {commitment}. The key is published when the sale opens, so anyone can check the draw.",
	BusyTitle:       "We are busy, retrying",
	BusyText:        "We could not check your place in line just now. Your place is kept: this page tries again in {in}.",
	ClosedTitle:     "Closed for now",
	ClosedText:      "This part of the site is closed at the moment. Please come back later.",
	CookiesTitle:    "Please allow cookies",
	CookiesText:     "This waiting room keeps your place in line in a cookie, and your browser did not keep it. Allow cookies for this site, then try again. The cookie holds nothing but your place in line.",
	CookiesApps:     "For developers: an app that keeps no cookies can send the pass in the Waiting-Room-Pass header instead.",
	TryAgain:        "Try again",
	WorkTitle:       "Joining the line",
	WorkText:        "Many people are arriving at once, so the waiting room asks your browser to do a short calculation before you join the line. It takes a few seconds at most; you need not do anything.",
	WorkLabel:       "Getting your place",
	WorkProgress:    "Getting your place: {percent}% done",
	WorkDone:        "Done. Taking you to the line.",
	WorkNoScript:    "This step needs JavaScript, which your browser has turned off. Turn it on for this site and try again, or come back when fewer people are arriving.",
	WorkWait:        "Without JavaScript this step is a short wait instead: this page takes you on by itself in a few seconds.",
}

var de = [numKeys]string{
	Title:           "Sie sind in der Warteschlange",
	LabelPlace:      "Ihr Platz in der Schlange",
	LabelAhead:      "Vor Ihnen",
	LabelWait:       "Geschätzte Wartezeit",
	LabelTicket:     "Ihre Nummer",
	LabelServing:    "Zurzeit an der Reihe",
	NobodyYet:       "noch niemand",
	LabelUpdated:    "Zuletzt aktualisiert",
	LabelProgress:   "Fortschritt seit Ihrer Ankunft",
	Turn:            "Wenn Sie an der Reihe sind, geht es automatisch weiter zu der Seite, die Sie aufgerufen haben.",
	Keep:            "Lassen Sie diese Seite geöffnet: Wer sie länger als ein paar Minuten verlässt, verliert seinen Platz.",
	Live:            "Diese Seite aktualisiert sich selbst.",
	RefreshNow:      "Jetzt aktualisieren",
	Support:         "Hilfe nötig? Support kontaktieren",
	Fifo:            "Die Seite ist gerade stark besucht, daher werden Besucher in der Reihenfolge ihrer Ankunft eingelassen.",
	Random:          "Die Seite ist gerade stark besucht. Wer innerhalb derselben {seconds} Sekunden ankam, bildet eine Gruppe, und innerhalb einer Gruppe wird in zufälliger Reihenfolge eingelassen. Gruppen vor Ihrer: {groups}.",
	Drawn:           "Der Verkauf hat um {starts} begonnen. Alle in der Vorwarteschlange haben ihren Platz durch eine Zufallsziehung erhalten; Sie sind irgendwann im angezeigten Bereich an der Reihe.",
	Priority:        "Sie haben einen bevorzugten Platz: Eingeladene werden vor der Schlange eingelassen, mit bis zu {share} % der Plätze, damit auch die Schlange vorankommt.",
	Paused:          "Der Einlass ist im Moment angehalten; Ihr Platz bleibt erhalten.",
	Announce:        "Sie sind jetzt Nummer {n} in der Schlange.",
	WaitUnknown:     "noch unbekannt: Die Seite ist voll, und zuletzt sind kaum Besucher gegangen",
	WaitPaused:      "unbekannt, solange der Einlass angehalten ist",
	WaitBeforeStart: "unbekannt, bis der Verkauf beginnt",
	LessThanMinute:  "weniger als eine Minute",
	About:           "etwa {d}",
	Range:           "{a}–{b}",
	HoursMinutes:    "{h} Std. {mm} Min.",
	AnyMoment:       "jeden Moment",
	DrawNote:        "Der Schlüssel der Ziehung war {key}; sein SHA-256, vor dem Verkauf veröffentlicht, ist {commitment}.",
	PrequeueTitle:   "Der Verkauf beginnt bald",
	PrequeueIntro:   "Sie sind in der Vorwarteschlange für {event}. Beginn: {starts}.",
	OpensIn:         "Beginnt in",
	PrequeueDraw:    "Zum Beginn erhalten alle in der Vorwarteschlange ihren Platz durch eine faire Zufallsziehung: Wer früher kam, ist dadurch nicht weiter vorn, und Sie verlieren nichts, weil Sie jetzt schon da sind. Wer nach dem Beginn ankommt, stellt sich hinter der Vorwarteschlange an.",
	PrequeueCommit:  "Der Schlüssel der Ziehung steht vorab fest; sein SHA-256 ist {commitment}. Der Schlüssel wird zum Beginn veröffentlicht, damit jeder die Ziehung nachprüfen kann.",
	BusyTitle:       "Gerade ausgelastet, neuer Versuch folgt",
	BusyText:        "Ihr Platz in der Schlange ließ sich gerade nicht prüfen. Ihr Platz bleibt erhalten: Diese Seite versucht es in {in} erneut.",
	ClosedTitle:     "Vorübergehend geschlossen",
	ClosedText:      "Dieser Bereich der Website ist im Moment geschlossen. Bitte kommen Sie später wieder.",
	CookiesTitle:    "Bitte Cookies erlauben",
	CookiesText:     "Dieser Warteraum merkt sich Ihren Platz in der Schlange in einem Cookie, und Ihr Browser hat ihn nicht behalten. Erlauben Sie Cookies für diese Website und versuchen Sie es dann erneut. Der Cookie enthält nichts als Ihren Platz in der Schlange.",
	CookiesApps:     "Für Entwickler: Eine App ohne Cookies kann den Pass stattdessen im Header Waiting-Room-Pass senden.",
	TryAgain:        "Erneut versuchen",
	WorkTitle:       "Sie kommen in die Schlange",
	WorkText:        "Gerade kommen viele Menschen gleichzeitig an, darum lässt der Warteraum Ihren Browser kurz rechnen, bevor Sie sich anstellen. Das dauert höchstens einige Sekunden; Sie müssen nichts tun.",
	WorkLabel:       "Ihr Platz wird vorbereitet",
	WorkProgress:    "Ihr Platz wird vorbereitet: {percent} % erledigt",
	WorkDone:        "Fertig. Sie kommen jetzt in die Schlange.",
	WorkNoScript:    "Dieser Schritt braucht JavaScript, das in Ihrem Browser ausgeschaltet ist. Schalten Sie es für diese Website ein und versuchen Sie es erneut, oder kommen Sie wieder, wenn weniger Menschen ankommen.",
	WorkWait:        "Ohne JavaScript ist dieser Schritt stattdessen eine kurze Wartezeit: Diese Seite bringt Sie in wenigen Sekunden von selbst weiter.",
}

var fr = [numKeys]string{
	Title:           "Vous êtes dans la file d’attente",
	LabelPlace:      "Votre place dans la file",
	LabelAhead:      "Devant vous",
	LabelWait:       "Attente estimée",
	LabelTicket:     "Votre ticket",
	LabelServing:    "Numéro appelé",
	NobodyYet:       "personne pour l’instant",
	LabelUpdated:    "Dernière mise à jour",
	LabelProgress:   "Progression depuis votre arrivée",
	Turn:            "Quand viendra votre tour, vous serez conduit automatiquement à la page demandée.",
	Keep:            "Gardez cette page ouverte\u00a0: si vous la quittez plus de quelques minutes, vous perdez votre place.",
	Live:            "Cette page se met à jour d’elle-même.",
	RefreshNow:      "Actualiser maintenant",
	Support:         "Besoin d’aide\u202f? Contactez l’assistance",
	Fifo:            "Le site est très sollicité\u202f; les visiteurs entrent dans l’ordre d’arrivée.",
	Random:          "Le site est très sollicité. Les visiteurs arrivés dans les mêmes {seconds}\u00a0secondes forment un groupe, et les membres d’un groupe entrent dans un ordre aléatoire. Groupes devant le vôtre\u00a0: {groups}.",
	Drawn:           "La vente a ouvert à {starts}. Chaque personne de la pré-file a reçu sa place par tirage au sort\u202f; votre tour viendra quelque part dans l’intervalle affiché.",
	Priority:        "Vous avez une place prioritaire\u00a0: les invités entrent avant la file, avec jusqu’à {share}\u00a0% des places, pour que la file avance aussi.",
	Paused:          "L’entrée est suspendue pour le moment\u202f; votre place est conservée.",
	Announce:        "Vous êtes maintenant n°\u00a0{n} dans la file.",
	WaitUnknown:     "pas encore connue\u00a0: le site est complet et peu de visiteurs en sont partis récemment",
	WaitPaused:      "inconnue tant que l’entrée est suspendue",
	WaitBeforeStart: "inconnue avant l’ouverture de la vente",
	LessThanMinute:  "moins d’une minute",
	About:           "environ {d}",
	Range:           "{a}–{b}",
	HoursMinutes:    "{h}\u00a0h\u00a0{mm}",
	AnyMoment:       "d’un instant à l’autre",
	DrawNote:        "La clé du tirage était {key}\u202f; son SHA-256, publié avant la vente, est {commitment}.",
	PrequeueTitle:   "La vente ouvre bientôt",
	PrequeueIntro:   "Vous êtes dans la pré-file pour {event}. Ouverture\u00a0: {starts}.",
	OpensIn:         "Ouverture dans",
	PrequeueDraw:    "À l’ouverture, chaque personne de la pré-file reçoit sa place par un tirage au sort équitable\u00a0: arriver plus tôt dans la pré-file ne fait pas passer devant, et vous ne perdez rien à être venu maintenant. Les personnes arrivées après l’ouverture se placent derrière la pré-file.",
	PrequeueCommit:  "La clé du tirage est fixée à l’avance\u202f; son SHA-256 est {commitment}. La clé est publiée à l’ouverture, pour que chacun puisse vérifier le tirage.",
	BusyTitle:       "Service très sollicité, nouvel essai",
	BusyText:        "Nous n’avons pas pu vérifier votre place dans la file à l’instant. Votre place est conservée\u00a0: cette page réessaie dans {in}.",
	ClosedTitle:     "Fermé pour le moment",
	ClosedText:      "Cette partie du site est fermée pour le moment. Merci de revenir plus tard.",
	CookiesTitle:    "Veuillez autoriser les cookies",
	CookiesText:     "Cette salle d’attente garde votre place dans la file dans un cookie, et votre navigateur ne l’a pas conservé. Autorisez les cookies pour ce site, puis réessayez. Ce cookie ne contient rien d’autre que votre place dans la file.",
	CookiesApps:     "Pour les développeurs\u00a0: une application sans cookies peut envoyer le laissez-passer dans l’en-tête Waiting-Room-Pass.",
	TryAgain:        "Réessayer",
	WorkTitle:       "Vous rejoignez la file",
	WorkText:        "Beaucoup de personnes arrivent en même temps : la salle d’attente demande à votre navigateur un court calcul avant que vous rejoigniez la file. Cela prend quelques secondes au plus ; vous n’avez rien à faire.",
	WorkLabel:       "Préparation de votre place",
	WorkProgress:    "Préparation de votre place : {percent} % effectués",
	WorkDone:        "C’est fait. Vous rejoignez la file.",
	WorkNoScript:    "Cette étape nécessite JavaScript, désactivé dans votre navigateur. Activez-le pour ce site et réessayez, ou revenez quand moins de personnes arrivent.",
	WorkWait:        "Sans JavaScript, cette étape est une courte attente : cette page vous emmène d’elle-même dans quelques secondes.",
}

var es = [numKeys]string{
	Title:           "Está en la fila",
	LabelPlace:      "Su lugar en la fila",
	LabelAhead:      "Delante de usted",
	LabelWait:       "Espera estimada",
	LabelTicket:     "Su número",
	LabelServing:    "Atendiendo ahora",
	NobodyYet:       "nadie todavía",
	LabelUpdated:    "Última actualización",
	LabelProgress:   "Avance desde su llegada",
	Turn:            "Cuando llegue su turno, continuará automáticamente a la página que solicitó.",
	Keep:            "Mantenga esta página abierta: si la deja más de unos minutos, perderá su lugar.",
	Live:            "Esta página se actualiza sola.",
	RefreshNow:      "Actualizar ahora",
	Support:         "¿Necesita ayuda? Contacte con soporte",
	Fifo:            "El sitio está muy concurrido, así que los visitantes entran en el orden en que llegaron.",
	Random:          "El sitio está muy concurrido. Quienes llegaron en los mismos {seconds} segundos forman un grupo, y dentro de un grupo se entra en orden aleatorio. Grupos delante del suyo: {groups}.",
	Drawn:           "La venta abrió a las {starts}. Cada persona de la precola recibió su lugar en la fila por sorteo; su turno llegará en algún punto del intervalo mostrado.",
	Priority:        "Tiene un lugar prioritario: los invitados entran antes que la fila, con hasta el {share} % de los lugares, para que la fila también avance.",
	Paused:          "La entrada está en pausa por el momento; su lugar se conserva.",
	Announce:        "Ahora es el número {n} de la fila.",
	WaitUnknown:     "aún desconocida: el sitio está lleno y pocos visitantes han salido últimamente",
	WaitPaused:      "desconocida mientras la entrada esté en pausa",
	WaitBeforeStart: "desconocida hasta que abra la venta",
	LessThanMinute:  "menos de un minuto",
	About:           "aprox. {d}",
	Range:           "{a}–{b}",
	HoursMinutes:    "{h} h {mm} min",
	AnyMoment:       "en cualquier momento",
	DrawNote:        "La clave del sorteo era {key}; su SHA-256, publicado antes de la venta, es {commitment}.",
	PrequeueTitle:   "La venta abre pronto",
	PrequeueIntro:   "Está en la precola de {event}. Apertura: {starts}.",
	OpensIn:         "Abre en",
	PrequeueDraw:    "Al abrir, cada persona de la precola recibe su lugar en la fila por un sorteo justo: llegar antes a la precola no le adelanta, y no pierde nada por haber venido ahora. Quienes lleguen después de la apertura harán fila detrás de la precola.",
	PrequeueCommit:  "La clave del sorteo se fija de antemano; su SHA-256 es {commitment}. La clave se publica al abrir, para que cualquiera pueda comprobar el sorteo.",
	BusyTitle:       "Estamos ocupados, reintentando",
	BusyText:        "No pudimos comprobar su lugar en la fila ahora mismo. Su lugar se conserva: esta página lo intentará de nuevo en {in}.",
	ClosedTitle:     "Cerrado por ahora",
	ClosedText:      "Esta parte del sitio está cerrada en este momento. Vuelva más tarde.",
	CookiesTitle:    "Permita las cookies",
	CookiesText:     "Esta sala de espera guarda su lugar en la fila en una cookie, y su navegador no la conservó. Permita las cookies para este sitio y vuelva a intentarlo. La cookie solo contiene su lugar en la fila.",
	CookiesApps:     "Para desarrolladores: una aplicación sin cookies puede enviar el pase en la cabecera Waiting-Room-Pass.",
	TryAgain:        "Volver a intentarlo",
	WorkTitle:       "Entrando en la fila",
	WorkText:        "Están llegando muchas personas a la vez, así que la sala de espera pide a su navegador un breve cálculo antes de que entre en la fila. Tarda unos segundos como mucho; no tiene que hacer nada.",
	WorkLabel:       "Preparando su lugar",
	WorkProgress:    "Preparando su lugar: {percent} % hecho",
	WorkDone:        "Listo. Le llevamos a la fila.",
	WorkNoScript:    "Este paso necesita JavaScript, que su navegador tiene desactivado. Actívelo para este sitio y vuelva a intentarlo, o vuelva cuando lleguen menos personas.",
	WorkWait:        "Sin JavaScript, este paso es una breve espera: esta página le llevará por sí sola en unos segundos.",
}

var ja = [numKeys]string{
	Title:           "順番待ちの列に並んでいます",
	LabelPlace:      "あなたの順番",
	LabelAhead:      "あなたより前の人数",
	LabelWait:       "予想待ち時間",
	LabelTicket:     "整理番号",
	LabelServing:    "現在の案内番号",
	NobodyYet:       "まだいません",
	LabelUpdated:    "最終更新",
	LabelProgress:   "到着してからの進み具合",
	Turn:            "順番が来ると、アクセスしたページへ自動的に進みます。",
	Keep:            "このページを開いたままにしてください。数分以上離れると順番が失われます。",
	Live:            "このページは自動的に更新されます。",
	RefreshNow:      "今すぐ更新",
	Support:         "お困りの場合はサポートへお問い合わせください",
	Fifo:            "サイトが混雑しているため、到着順にご案内しています。",
	Random:          "サイトが混雑しています。同じ{seconds}秒間に到着した方は一つのグループになり、グループ内ではランダムな順にご案内します。あなたのグループより前のグループ数：{groups}。",
	Drawn:           "販売は{starts}に始まりました。事前待機列の全員に抽選で順番が割り当てられました。表示された範囲のどこかで順番が来ます。",
	Priority:        "優先枠をお持ちです。招待された方は列より先に、最大{share}%の枠でご案内します。列も引き続き進みます。",
	Paused:          "現在、入場を一時停止しています。順番はそのまま保持されます。",
	Announce:        "現在{n}番目です。",
	WaitUnknown:     "まだ不明です（満員で、最近退出した人がほとんどいません）",
	WaitPaused:      "入場の一時停止中は不明です",
	WaitBeforeStart: "販売開始までは不明です",
	LessThanMinute:  "1分未満",
	About:           "約{d}",
	Range:           "{a}～{b}",
	HoursMinutes:    "{h}時間{mm}分",
	AnyMoment:       "まもなく",
	DrawNote:        "抽選の鍵は{key}でした。販売前に公開されたそのSHA-256は{commitment}です。",
	PrequeueTitle:   "まもなく販売開始",
	PrequeueIntro:   "{event}の事前待機列に並んでいます。開始：{starts}",
	OpensIn:         "開始まで",
	PrequeueDraw:    "開始時に、事前待機列の全員に公平な抽選で順番が割り当てられます。早く並んでも有利にはならず、今来たことで不利になることもありません。開始後に到着した方は事前待機列の後ろに並びます。",
	PrequeueCommit:  "抽選の鍵は事前に決まっています。そのSHA-256は{commitment}です。鍵は販売開始時に公開され、誰でも抽選を検証できます。",
	BusyTitle:       "混雑しています。再試行します",
	BusyText:        "現在、順番を確認できませんでした。順番は保持されています。このページは{in}後に再試行します。",
	ClosedTitle:     "現在受付を停止しています",
	ClosedText:      "現在、このページはご利用いただけません。しばらくしてから再度お越しください。",
	CookiesTitle:    "Cookie を許可してください",
	CookiesText:     "この待合室では列での順番を Cookie に保存しますが、お使いのブラウザーには保存されませんでした。このサイトの Cookie を許可してから、もう一度お試しください。この Cookie に保存されるのは列での順番だけです。",
	CookiesApps:     "開発者の方へ：Cookie を使わないアプリは、代わりに Waiting-Room-Pass ヘッダーでパスを送信できます。",
	TryAgain:        "もう一度試す",
	WorkTitle:       "列に並んでいます",
	WorkText:        "ただいま多くの方が同時にアクセスしているため、列に並ぶ前にブラウザで短い計算を行います。長くても数秒で終わり、操作は必要ありません。",
	WorkLabel:       "順番を準備しています",
	WorkProgress:    "順番を準備しています：{percent}% 完了",
	WorkDone:        "完了しました。列にご案内します。",
	WorkNoScript:    "この手順には JavaScript が必要ですが、お使いのブラウザでは無効になっています。このサイトで有効にしてもう一度お試しいただくか、アクセスが落ち着いてからお越しください。",
	WorkWait:        "JavaScript が無効な場合は、この手順の代わりに少しお待ちいただきます。数秒後にこのページが自動的に進みます。",
}

var pt = [numKeys]string{
	Title:           "Você está na fila",
	LabelPlace:      "Sua posição na fila",
	LabelAhead:      "À sua frente",
	LabelWait:       "Espera estimada",
	LabelTicket:     "Sua senha",
	LabelServing:    "Atendendo agora",
	NobodyYet:       "ninguém ainda",
	LabelUpdated:    "Última atualização",
	LabelProgress:   "Progresso desde a sua chegada",
	Turn:            "Quando chegar a sua vez, você seguirá automaticamente para a página que pediu.",
	Keep:            "Mantenha esta página aberta: se sair dela por mais de alguns minutos, você perde a sua posição.",
	Live:            "Esta página se atualiza sozinha.",
	RefreshNow:      "Atualizar agora",
	Support:         "Precisa de ajuda? Fale com o suporte",
	Fifo:            "O site está movimentado, então os visitantes entram na ordem de chegada.",
	Random:          "O site está movimentado. Quem chegou nos mesmos {seconds} segundos forma um grupo, e dentro de um grupo a entrada é em ordem aleatória. Grupos à frente do seu: {groups}.",
	Drawn:           "A venda abriu às {starts}. Cada pessoa da pré-fila recebeu sua posição por sorteio; a sua vez chega em algum ponto do intervalo mostrado.",
	Priority:        "Você tem uma posição prioritária: convidados entram antes da fila, com até {share}% das vagas, para que a fila também avance.",
	Paused:          "A entrada está pausada no momento; a sua posição está guardada.",
	Announce:        "Agora você é o número {n} da fila.",
	WaitUnknown:     "ainda desconhecida: o site está cheio e poucos visitantes saíram recentemente",
	WaitPaused:      "desconhecida enquanto a entrada estiver pausada",
	WaitBeforeStart: "desconhecida até a venda abrir",
	LessThanMinute:  "menos de um minuto",
	About:           "cerca de {d}",
	Range:           "{a}–{b}",
	HoursMinutes:    "{h} h {mm} min",
	AnyMoment:       "a qualquer momento",
	DrawNote:        "A chave do sorteio era {key}; seu SHA-256, publicado antes da venda, é {commitment}.",
	PrequeueTitle:   "A venda abre em breve",
	PrequeueIntro:   "Você está na pré-fila de {event}. Abertura: {starts}.",
	OpensIn:         "Abre em",
	PrequeueDraw:    "Na abertura, cada pessoa da pré-fila recebe sua posição na fila por um sorteio justo: chegar antes na pré-fila não coloca você mais à frente, e você não perde nada por ter vindo agora. Quem chegar depois da abertura entra na fila atrás da pré-fila.",
	PrequeueCommit:  "A chave do sorteio é definida com antecedência; seu SHA-256 é {commitment}. A chave é publicada na abertura, para que qualquer pessoa possa conferir o sorteio.",
	BusyTitle:       "Estamos ocupados, tentando de novo",
	BusyText:        "Não conseguimos verificar sua posição na fila agora. Sua posição está guardada: esta página tenta de novo em {in}.",
	ClosedTitle:     "Fechado no momento",
	ClosedText:      "Esta parte do site está fechada no momento. Volte mais tarde.",
	CookiesTitle:    "Permita os cookies",
	CookiesText:     "Esta sala de espera guarda a sua posição na fila em um cookie, e o seu navegador não o guardou. Permita os cookies para este site e tente de novo. O cookie guarda apenas a sua posição na fila.",
	CookiesApps:     "Para desenvolvedores: um app que não guarda cookies pode enviar o passe no cabeçalho Waiting-Room-Pass.",
	TryAgain:        "Tentar de novo",
	WorkTitle:       "Entrando na fila",
	WorkText:        "Muitas pessoas estão chegando ao mesmo tempo, então a sala de espera pede ao seu navegador um cálculo rápido antes de você entrar na fila. Leva alguns segundos no máximo; você não precisa fazer nada.",
	WorkLabel:       "Preparando o seu lugar",
	WorkProgress:    "Preparando o seu lugar: {percent}% feito",
	WorkDone:        "Pronto. Levando você para a fila.",
	WorkNoScript:    "Esta etapa precisa de JavaScript, que está desativado no seu navegador. Ative-o para este site e tente de novo, ou volte quando menos pessoas estiverem chegando.",
	WorkWait:        "Sem JavaScript, esta etapa é uma breve espera: esta página leva você adiante sozinha em alguns segundos.",
}
